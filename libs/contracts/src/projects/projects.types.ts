import { ApiProperty } from '@nestjs/swagger';
import { idSchema } from '../ids.js';

/** A project as the API shows it. */
export class Project {
  @ApiProperty(idSchema('proj'))
  id: string;

  @ApiProperty({ example: 'shop-backend' })
  name: string;

  @ApiProperty({ example: 'local', description: 'Region of new databases.' })
  default_region: string;

  @ApiProperty({ format: 'date-time' })
  created_at: string;
}

/** GET /projects/{id}: the project and how many databases it holds. */
export class ProjectDetail extends Project {
  @ApiProperty({ type: 'integer', example: 0 })
  database_count: number;
}

/** GET /projects. */
export class ProjectList {
  @ApiProperty({ type: [Project] })
  projects: Project[];
}

/** A region of the deployment. */
export class Region {
  @ApiProperty({ example: 'local' })
  id: string;

  @ApiProperty({ example: 'This host' })
  name: string;
}

/** GET /regions. */
export class RegionList {
  @ApiProperty({ type: [Region] })
  regions: Region[];
}

/** The answer to every DELETE. */
export class Deleted {
  @ApiProperty({ example: 'proj_k3v9x0q2m8t4b7w1c5zd' })
  id: string;

  @ApiProperty({ type: Boolean, enum: [true] })
  deleted: true;
}
