import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsEmail,
  IsIn,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
} from 'class-validator';

/** Local logins: 1-39 letters, digits or hyphens, a letter or digit first. */
const LOGIN_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/;

/** Body of POST /auth/device/token. */
export class DeviceTokenDto {
  @ApiProperty({ description: 'The device_code POST /auth/device answered.', maxLength: 200 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  device_code: string;
}

/** The form of the /device verification page. */
export class DeviceVerifyDto {
  @ApiProperty({ description: 'The code the terminal shows.', example: 'BCDF-GHJK', maxLength: 20 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(20)
  user_code: string;

  @ApiProperty({ description: 'The login to sign in as.', pattern: LOGIN_PATTERN.source })
  @Matches(LOGIN_PATTERN, {
    message: 'login must be 1-39 letters, digits or hyphens, starting with a letter or digit',
  })
  login: string;

  @ApiPropertyOptional({ description: 'The email to record.', format: 'email', maxLength: 254 })
  @IsOptional()
  @IsEmail({}, { message: 'email must be an email address' })
  @MaxLength(254)
  email?: string;

  @ApiProperty({ description: 'Which button was pressed.', enum: ['approve', 'deny'] })
  @IsIn(['approve', 'deny'])
  action: 'approve' | 'deny';
}
