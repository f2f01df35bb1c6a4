import { IsNotEmpty, IsString, IsUrl, Matches } from 'class-validator';
import { CommonEnv } from './common-env.js';

/**
 * Settings of the services that keep objects in S3 (backup-service, pitr-worker). No
 * endpoint default: `npm run up` and the tests start a local S3 and pass its settings.
 */
export class StorageEnv extends CommonEnv {
  /** Base URL of any S3-compatible API (Ceph RGW, MinIO, AWS S3, R2), asked path-style. */
  @IsUrl(
    { require_tld: false, protocols: ['http', 'https'], require_protocol: true },
    { message: 'must be the http(s) URL of an S3-compatible store' },
  )
  S3_ENDPOINT!: string;

  /** The region requests are signed for. */
  @IsString()
  @IsNotEmpty()
  S3_REGION: string = 'us-east-1';

  /** The id of the access key pgcloud signs requests with. */
  @IsString()
  @IsNotEmpty()
  S3_ACCESS_KEY_ID!: string;

  /** The secret of that access key. */
  @IsString()
  @IsNotEmpty()
  S3_SECRET_ACCESS_KEY!: string;

  /** The one bucket pgcloud keeps its objects in; made at start when missing. */
  @Matches(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, { message: 'must be an S3 bucket name' })
  S3_BUCKET: string = 'pgcloud';
}
