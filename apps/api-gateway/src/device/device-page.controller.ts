import { Body, Controller, Get, HttpCode, Post, Query, Req, Res } from '@nestjs/common';
import type { DeviceVerifyRequest, DeviceVerifyResult } from '@pgcloud/contracts';
import { AUTH_PATTERNS, DeviceVerifyDto, DomainError, httpStatusFor } from '@pgcloud/contracts';
import { validationDetails } from '@pgcloud/messaging';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import type { Response } from 'express';
import { ServiceClients } from '../clients/service-clients.js';
import { GatewayConfig } from '../config.js';
import type { GatewayRequest } from '../http/request-context.js';
import { clientIp, contextOf } from '../http/request-context.js';
import { Public, RawResponse } from '../http/route-flags.js';
import { deviceDone, deviceForm } from './device-page.html.js';

/** The verification page of the local identity provider (decisions.md section 2). */
@Public()
@RawResponse()
@Controller('device')
export class DevicePageController {
  constructor(
    private readonly clients: ServiceClients,
    private readonly config: GatewayConfig,
  ) {}

  @Get()
  show(@Query('user_code') userCode: unknown, @Res() res: Response): void {
    res.type('html').send(deviceForm({ user_code: typeof userCode === 'string' ? userCode : '' }));
  }

  @Post()
  @HttpCode(200)
  async answer(
    @Body() body: Record<string, unknown>,
    @Req() req: GatewayRequest,
    @Res() res: Response,
  ): Promise<void> {
    const values = {
      user_code: text(body['user_code']),
      login: text(body['login']),
      email: text(body['email']) || undefined,
    };
    const form = plainToInstance(DeviceVerifyDto, { ...values, action: text(body['action']) });
    const problems = validationDetails(await validate(form, { whitelist: true }));
    if (problems.length > 0) {
      res
        .status(400)
        .type('html')
        .send(deviceForm(values, problems.map((p) => p.message).join('. ')));
      return;
    }
    const payload: DeviceVerifyRequest = {
      ...form,
      client_ip: clientIp(req, this.config.TRUST_PROXY),
    };
    try {
      const result = await this.clients.auth.send<DeviceVerifyResult>(
        AUTH_PATTERNS.verifyDevice,
        contextOf(req),
        payload,
      );
      res.type('html').send(deviceDone(result.outcome, result.login));
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      res.status(httpStatusFor(err.code)).type('html').send(deviceForm(values, err.message));
    }
  }
}

function text(value: unknown): string {
  return typeof value === 'string' ? value.trim() : '';
}
