import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import type {
  LocalDatabaseDetail,
  LocalDeleted,
  LocalSnapshot,
  LocalSnapshotList,
} from '@pgcloud/contracts';
import { CreateLocalSnapshotDto, ResetLocalDatabaseDto } from '@pgcloud/contracts';
import { LocalSnapshots } from './local-snapshots.service.js';

/** Snapshots of the local daemon's databases (docs/api/local-daemon.md#snapshots). */
@Controller('databases/:name')
export class LocalSnapshotsController {
  constructor(private readonly snapshots: LocalSnapshots) {}

  @Post('snapshots')
  create(
    @Param('name') name: string,
    @Body() body: CreateLocalSnapshotDto,
  ): Promise<LocalSnapshot> {
    return this.snapshots.create(name, body);
  }

  @Get('snapshots')
  list(@Param('name') name: string): Promise<LocalSnapshotList> {
    return this.snapshots.list(name);
  }

  @Delete('snapshots/:snapshot')
  delete(@Param('name') name: string, @Param('snapshot') snapshot: string): Promise<LocalDeleted> {
    return this.snapshots.delete(name, snapshot);
  }

  @Post('reset')
  @HttpCode(200)
  reset(
    @Param('name') name: string,
    @Body() body: ResetLocalDatabaseDto,
  ): Promise<LocalDatabaseDetail> {
    return this.snapshots.reset(name, body);
  }
}
