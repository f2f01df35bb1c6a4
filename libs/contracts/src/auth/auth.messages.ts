import { IntersectionType } from '@nestjs/swagger';
import { IsArray, IsBoolean, IsOptional, IsString, MaxLength } from 'class-validator';
import { IsIdOf, IsRef } from '../message-rules.js';
import { DeviceVerifyDto } from './auth.dto.js';

/** The address a request came from; it counts for nothing but logs. */
class ClientAddress {
  @IsString()
  @MaxLength(100)
  client_ip: string;
}

/** auth.device.start. */
export class DeviceStartRequest extends ClientAddress {}

/** auth.device.verify: the form plus the address it came from. */
export class DeviceVerifyRequest extends IntersectionType(DeviceVerifyDto, ClientAddress) {}

/** auth.token.verify: the bearer token as it came (an unknown one is AUTH_REQUIRED). */
export class VerifyTokenRequest {
  @IsString()
  token: string;
}

/** The token of the calling request. */
export class CallingToken {
  @IsIdOf('tok')
  token_id: string;
}

/** auth.logout: the calling token, or with `all` every token of the caller. */
export class LogoutRequest extends CallingToken {
  @IsOptional()
  @IsBoolean()
  all?: boolean;
}

/** auth.tokens.revoke: a token of the caller, by the id the list shows (else TOKEN_NOT_FOUND). */
export class RevokeTokenRequest {
  @IsRef()
  id: string;
}

/** auth.users.tiers: whose tiers to look up; unknown ids are left out of the answer. */
export class UserTiersRequest {
  @IsArray()
  @IsIdOf('user', { each: true })
  user_ids: string[];
}
