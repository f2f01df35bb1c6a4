/** A project as the API shows it. */
export interface Project {
  id: string;
  name: string;
  default_region: string;
  created_at: string;
}

/** GET /projects/{id}. */
export interface ProjectDetail extends Project {
  database_count: number;
}

/** A region of the deployment. */
export interface Region {
  id: string;
  name: string;
}

/** The answer to every DELETE. */
export interface Deleted {
  id: string;
  deleted: true;
}
