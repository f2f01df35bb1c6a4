import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { Deleted, Project, ProjectDetail, Region } from '@pgcloud/contracts';

/** A project as the API shows it. */
@ApiSchema({ name: 'Project' })
export class ProjectModel implements Project {
  @ApiProperty({ example: 'proj_k3v9x0q2m8t4b7w1c5zd', pattern: '^proj_[0-9a-z]{20}$' })
  id: string;

  @ApiProperty({ example: 'shop-backend' })
  name: string;

  @ApiProperty({ example: 'local', description: 'Region of new databases.' })
  default_region: string;

  @ApiProperty({ format: 'date-time' })
  created_at: string;
}

/** GET /projects/{id}: the project and how many databases it holds. */
@ApiSchema({ name: 'ProjectDetail' })
export class ProjectDetailModel extends ProjectModel implements ProjectDetail {
  @ApiProperty({ type: 'integer', example: 0 })
  database_count: number;
}

/** GET /projects. */
@ApiSchema({ name: 'ProjectList' })
export class ProjectListModel {
  @ApiProperty({ type: [ProjectModel] })
  projects: ProjectModel[];
}

/** A region of the deployment. */
@ApiSchema({ name: 'Region' })
export class RegionModel implements Region {
  @ApiProperty({ example: 'local' })
  id: string;

  @ApiProperty({ example: 'This host' })
  name: string;
}

/** GET /regions. */
@ApiSchema({ name: 'RegionList' })
export class RegionListModel {
  @ApiProperty({ type: [RegionModel] })
  regions: RegionModel[];
}

/** The answer of every DELETE. */
@ApiSchema({ name: 'Deleted' })
export class DeletedModel implements Deleted {
  @ApiProperty({ example: 'proj_k3v9x0q2m8t4b7w1c5zd' })
  id: string;

  @ApiProperty({ type: Boolean, enum: [true] })
  deleted: true;
}
