import { SetMetadata } from '@nestjs/common';

/** Metadata key of routes whose answer is not wrapped in the envelope. */
export const IS_RAW = 'pgcloud:raw';

/** A route whose answer is not wrapped in the envelope (HTML pages, PEM files). */
export const RawResponse = (): MethodDecorator & ClassDecorator => SetMetadata(IS_RAW, true);
