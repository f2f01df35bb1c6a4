import { IsString } from 'class-validator';
import { event } from '../catalogue.js';

/** Payload of PROJECT_EVENTS. */
export class ProjectEvent {
  @IsString()
  project_id!: string;

  @IsString()
  owner_id!: string;
}

/** Events published by project-service on EVENTS_EXCHANGE. */
export const PROJECT_EVENTS = {
  /** A project was created. */
  created: event('project.created', ProjectEvent, 'project-service'),
  /** A project is gone from the API; owners of its parts clean up. */
  deleted: event('project.deleted', ProjectEvent, 'project-service'),
} as const;
