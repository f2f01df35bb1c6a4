import { Payload } from '@nestjs/microservices';

/** The payload part of a Message, validated by the service's ValidationPipe. */
export const MessageBody = (): ParameterDecorator => Payload('payload');

/** The RequestContext part of a Message. */
export const MessageCtx = (): ParameterDecorator => Payload('ctx');
