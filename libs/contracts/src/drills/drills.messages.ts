import { DatabaseRef } from '../databases/databases.messages.js';
import { IsRef } from '../message-rules.js';

/** A drill, named as the API names it. */
export class DrillRef extends DatabaseRef {
  @IsRef()
  drill_id: string;
}
