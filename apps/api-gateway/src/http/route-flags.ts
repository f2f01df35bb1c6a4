import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'pgcloud:public';
export const IS_RAW = 'pgcloud:raw';

/** A route anyone may call without a token (decisions.md section 2). */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(IS_PUBLIC, true);

/** A route whose answer is not wrapped in the envelope (HTML pages). */
export const RawResponse = (): MethodDecorator & ClassDecorator => SetMetadata(IS_RAW, true);
