import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'pgcloud:public';

/** A route anyone may call without a token (docs/api/auth.md). */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(IS_PUBLIC, true);
