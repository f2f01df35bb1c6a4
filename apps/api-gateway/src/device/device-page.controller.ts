import { Body, Controller, Get, HttpCode, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { DeviceVerifyRequest } from '@pgcloud/contracts';
import { AUTH_PATTERNS, DeviceVerifyDto, DomainError, httpStatusFor } from '@pgcloud/contracts';
import { RawResponse, validationDetails } from '@pgcloud/http';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import type { FastifyReply } from 'fastify';
import { RpcClient } from '@pgcloud/messaging';
import { GatewayConfig } from '../config.js';
import type { GatewayRequest } from '../http/request-context.js';
import { clientIp } from '../http/client-ip.js';
import { contextOf } from '../http/request-context.js';
import { Public } from '../http/route-flags.js';
import { ApiErrors, ApiHtml } from '../openapi/api-envelope.decorator.js';
import { deviceDone, deviceForm } from './device-page.html.js';
import { FORM_TOKEN_FIELD, formRefusal, issueFormToken } from './form-token.js';

const HTML = 'text/html; charset=utf-8';

/** The verification page of the local identity provider (docs/api/auth.md#device-sign-in). */
@Public()
@RawResponse()
@ApiTags('device page')
@Controller('device')
export class DevicePageController {
  constructor(
    private readonly rpc: RpcClient,
    private readonly config: GatewayConfig,
  ) {}

  @Get()
  @ApiOperation({
    operationId: 'showDevicePage',
    summary: 'The verification form, for a person in a browser',
  })
  @ApiQuery({
    name: 'user_code',
    required: false,
    type: String,
    description: 'Fills in the code field.',
  })
  @ApiHtml(200, 'The form: fields `user_code`, `login`, `email`; buttons `action`.')
  @ApiErrors('RATE_LIMIT_EXCEEDED')
  show(@Query('user_code') userCode: unknown, @Res() reply: FastifyReply): void {
    this.sendForm(reply, 200, { user_code: typeof userCode === 'string' ? userCode : '' });
  }

  @Post()
  @HttpCode(200)
  @ApiOperation({
    operationId: 'answerDevicePage',
    summary: 'Approve or deny a device sign-in',
    description:
      'Posted by the form, with the anti-forgery token of its hidden field `' +
      FORM_TOKEN_FIELD +
      '` and the cookie set when the form was served. Its own failures answer the form ' +
      'again with the error, as HTML, in the status of the code: 400 (VALIDATION_ERROR, ' +
      'DEVICE_CODE_INVALID, DEVICE_CODE_EXPIRED), 403 FORBIDDEN (no matching token and ' +
      'cookie, or an Origin other than this site), 403 ACCESS_DENIED ' +
      '(LOCAL_IDP_ALLOWED_LOGINS), 429 (too many ' +
      'wrong codes from the address), 503 SERVICE_UNAVAILABLE. The edge answers JSON error ' +
      'envelopes for a body over 64 KiB (413) and for a spent request bucket (429).',
  })
  @ApiConsumes('application/x-www-form-urlencoded')
  @ApiBody({ type: DeviceVerifyDto })
  @ApiHtml(200, 'The confirmation: approved (signed in as the login) or denied.')
  @ApiHtml(400, 'The form again, with the problem.')
  @ApiHtml(403, 'The form again: not posted from this page, or that login may not sign in.')
  @ApiHtml(429, 'The form again: too many wrong codes from this address.', ['RATE_LIMIT_EXCEEDED'])
  @ApiHtml(503, 'The form again: the sign-in service did not answer.')
  @ApiErrors('PAYLOAD_TOO_LARGE')
  async answer(
    // Undefined when no body was sent (one of another type is refused before this runs).
    @Body() body: Record<string, unknown> | undefined,
    @Req() req: GatewayRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const fields = body ?? {};
    const values = {
      user_code: text(fields['user_code']),
      login: text(fields['login']),
      email: text(fields['email']) || undefined,
    };
    const refusal = formRefusal(req, fields[FORM_TOKEN_FIELD], this.config.PUBLIC_BASE_URL);
    if (refusal) return this.sendForm(reply, httpStatusFor('FORBIDDEN'), values, refusal);
    const form = plainToInstance(DeviceVerifyDto, { ...values, action: text(fields['action']) });
    const problems = validationDetails(await validate(form, { whitelist: true }));
    if (problems.length > 0)
      return this.sendForm(reply, 400, values, problems.map((p) => p.message).join('. '));
    const payload: DeviceVerifyRequest = {
      ...form,
      client_ip: clientIp(req, this.config.TRUST_PROXY),
    };
    try {
      const result = await this.rpc.call(AUTH_PATTERNS.verifyDevice, contextOf(req), payload);
      reply.type(HTML).send(deviceDone(result.outcome, result.login));
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      this.sendForm(reply, httpStatusFor(err.code), values, err.message);
    }
  }

  /** The form, with a fresh anti-forgery token in its hidden field and its cookie. */
  private sendForm(
    reply: FastifyReply,
    status: number,
    values: { user_code?: string; login?: string; email?: string },
    error?: string,
  ): void {
    const token = issueFormToken(reply, this.config.PUBLIC_BASE_URL);
    reply
      .code(status)
      .type(HTML)
      .send(deviceForm(values, token, error));
  }
}

function text(value: unknown): string {
  return typeof value === 'string' ? value.trim() : '';
}
