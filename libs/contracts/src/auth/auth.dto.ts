import {
  IsEmail,
  IsIn,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
} from 'class-validator';

/** Body of POST /auth/device/token. */
export class DeviceTokenDto {
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  device_code: string;
}

/** The form of the /device verification page. */
export class DeviceVerifyDto {
  @IsString()
  @IsNotEmpty()
  @MaxLength(20)
  user_code: string;

  @Matches(/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/, {
    message: 'login must be 1-39 letters, digits or hyphens, starting with a letter or digit',
  })
  login: string;

  @IsOptional()
  @IsEmail({}, { message: 'email must be an email address' })
  @MaxLength(254)
  email?: string;

  @IsIn(['approve', 'deny'])
  action: 'approve' | 'deny';
}
