import { Column, CreateDateColumn, Entity, PrimaryColumn, Unique } from 'typeorm';

/** A project of one account. */
@Entity({ schema: 'projects', name: 'projects' })
@Unique('projects_owner_name_key', ['ownerId', 'name'])
export class ProjectEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'owner_id', type: 'text' })
  ownerId: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ name: 'default_region', type: 'text' })
  defaultRegion: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
