import type { DomainError } from '@pgcloud/contracts';
import { errorAnswer } from '@pgcloud/http';
import type { FastifyReply } from 'fastify';

/** Answers `error` in the envelope from a hook, before any route runs. */
export function answerError(reply: FastifyReply, error: DomainError): FastifyReply {
  const answer = errorAnswer(error);
  return reply.code(answer.status).headers(answer.headers).send(answer.body);
}
