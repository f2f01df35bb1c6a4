import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiSecurity } from '@nestjs/swagger';

export const IS_PUBLIC = 'pgcloud:public';

/**
 * A route anyone may call without a token (docs/api/auth.md). Its OpenAPI operation says so
 * with `security: []`; the scanner drops an empty list, so this leaves a requirement named
 * IS_PUBLIC, which the document's builder turns into `[]` (openapi/openapi.ts).
 */
export const Public = (): MethodDecorator & ClassDecorator =>
  applyDecorators(SetMetadata(IS_PUBLIC, true), ApiSecurity(IS_PUBLIC));
