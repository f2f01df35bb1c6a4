import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsEmail,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { IsQueryFlag } from '../message-rules.js';

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

/** API keys live 1 to 365 days, 90 unless asked otherwise. */
export const API_KEY_DAYS = { min: 1, max: 365, default: 90 } as const;
/** Live (unrevoked, unexpired) API keys one user may hold. */
export const API_KEY_LIMIT = 20;

/** Body of POST /auth/tokens: an API key for machines. */
export class CreateTokenDto {
  @ApiProperty({
    description: 'What the key is for, as the token list shows it.',
    example: 'ci-deploy',
    minLength: 1,
    maxLength: 64,
  })
  @IsString()
  @Matches(/^[\x20-\x7e]{1,64}$/, {
    message: 'name must be 1-64 printable characters',
  })
  name: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: API_KEY_DAYS.min,
    maximum: API_KEY_DAYS.max,
    default: API_KEY_DAYS.default,
    description: 'Days until the key expires.',
  })
  @IsOptional()
  @IsInt()
  @Min(API_KEY_DAYS.min)
  @Max(API_KEY_DAYS.max)
  expires_in_days?: number;
}

/** Query of POST /auth/logout. */
export class LogoutQuery {
  @ApiPropertyOptional({
    enum: ['true', 'false'],
    description: '`true` revokes every token of the caller, not only the calling one.',
  })
  @IsQueryFlag()
  all?: boolean;
}
