import { Body, Controller, Delete, Get, Param, Patch, Post } from '@nestjs/common';
import type { LocalDatabaseDetail, LocalDatabaseList, LocalDeleted } from '@pgcloud/contracts';
import { CreateLocalDatabaseDto, UpdateLocalDatabaseDto } from '@pgcloud/contracts';
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

  @Patch(':name')
  update(
    @Param('name') name: string,
    @Body() body: UpdateLocalDatabaseDto,
  ): Promise<LocalDatabaseDetail> {
    return this.databases.update(name, body);
  }

  @Delete(':name')
  delete(@Param('name') name: string): Promise<LocalDeleted> {
    return this.databases.delete(name);
  }
}
