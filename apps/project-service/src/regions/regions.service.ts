import { Injectable } from '@nestjs/common';
import type { Region } from '@pgcloud/contracts';
import { ProjectServiceConfig } from '../config.js';

/** The deployment's regions, from configuration. */
@Injectable()
export class RegionsService {
  constructor(private readonly config: ProjectServiceConfig) {}

  list(): Region[] {
    return this.config.regions;
  }

  /** The region new projects get when they name none. */
  defaultRegion(): Region {
    const [first] = this.config.regions;
    if (!first) throw new Error('REGIONS lists no region');
    return first;
  }

  has(id: string): boolean {
    return this.config.regions.some((region) => region.id === id);
  }
}
