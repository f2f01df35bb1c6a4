import { Body, Controller, Delete, Get, Param, Post } from '@nestjs/common';
import type { LocalDatabaseDetail, LocalDatabaseList, LocalDeleted } from '@pgcloud/contracts';
import { CreateLocalDatabaseDto } from '@pgcloud/contracts';
import { LocalDatabasesService } from './local-databases.service.js';

/** The local daemon's API (docs/api/local-daemon.md). */
@Controller('databases')
export class LocalDatabasesController {
  constructor(private readonly databases: LocalDatabasesService) {}

  @Get()
  list(): Promise<LocalDatabaseList> {
    return this.databases.list();
  }

  @Post()
  create(@Body() body: CreateLocalDatabaseDto): Promise<LocalDatabaseDetail> {
    return this.databases.create(body);
  }

  @Get(':name')
  get(@Param('name') name: string): Promise<LocalDatabaseDetail> {
    return this.databases.get(name);
  }

  @Delete(':name')
  delete(@Param('name') name: string): Promise<LocalDeleted> {
    return this.databases.delete(name);
  }
}
