import { Controller, Get, Header } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { RequestContext } from '@pgcloud/contracts';
import { DATABASE_PATTERNS } from '@pgcloud/contracts';
import { RawResponse } from '@pgcloud/http';
import { RpcClient } from '@pgcloud/messaging';
import { Ctx } from '../http/request-context.js';
import { Public } from '../http/route-flags.js';
import { ApiErrors } from '../openapi/api-envelope.decorator.js';

/** `GET /ca.pem`: the CA that issues every database server's certificate. */
@ApiTags('databases')
@Controller('ca.pem')
export class CaCertificateController {
  constructor(private readonly rpc: RpcClient) {}

  @Public()
  @RawResponse()
  @Get()
  @Header('Content-Type', 'application/x-pem-file')
  @ApiOperation({
    operationId: 'getCaCertificate',
    summary: "The deployment's CA certificate",
    description: 'Clients that verify the server (sslmode=verify-full, node-postgres) need it.',
  })
  @ApiProduces('application/x-pem-file')
  @ApiResponse({
    status: 200,
    description: 'The CA certificate, PEM.',
    content: { 'application/x-pem-file': { schema: { type: 'string' } } },
  })
  // Public: every call spends its address's bucket (docs/api/errors.md#rate-limits).
  @ApiErrors('RATE_LIMIT_EXCEEDED')
  async get(@Ctx() ctx: RequestContext): Promise<string> {
    const { pem } = await this.rpc.call(DATABASE_PATTERNS.caCertificate, ctx, {});
    return pem;
  }
}
