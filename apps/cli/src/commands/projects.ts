import type { Project } from '@pgcloud/api-client';
import {
  createProject,
  deleteProject,
  getProject,
  listProjects,
  listRegions,
  unwrap,
} from '@pgcloud/api-client';
import type { Command } from 'commander';
import { runs, withCommonOptions } from '../context.js';
import { renderFields, renderTable } from '../output.js';
import { configPath, readJsonFile, writePrivateJsonFile } from '../settings-files.js';
import type { CliConfig } from '../settings-files.js';

/** `projects list|create|get|delete`, `regions`, `use`. */
export function registerProjectCommands(program: Command): void {
  const projects = program
    .command('projects')
    .description('List, create, show and delete projects');

  withCommonOptions(
    projects.command('list').description('List the projects of your account'),
  ).action(
    runs(async (ctx) => {
      const answer = await unwrap(listProjects({ client: ctx.api() }));
      ctx.out.result(
        answer,
        () =>
          renderTable(answer.projects, [
            { header: 'id', value: (p) => p.id },
            { header: 'name', value: (p) => p.name },
            { header: 'region', value: (p) => p.default_region },
            { header: 'created', value: (p) => p.created_at },
          ]),
        () => answer.projects.map((p) => p.id).join('\n'),
      );
    }),
  );

  withCommonOptions(
    projects
      .command('create')
      .description('Create a project')
      .argument('<name>', 'the new project name (unique in your account)')
      .option('--region <region>', 'region of its new databases (see `pgcloud regions`)'),
  ).action(
    runs(async (ctx, name: string) => {
      const region = (ctx.options as { region?: string }).region;
      const project = await unwrap(
        createProject({
          client: ctx.api(),
          body: { name, ...(region ? { default_region: region } : {}) },
        }),
      );
      ctx.out.result(
        project,
        () => showProject(project),
        () => project.id,
      );
    }),
  );

  withCommonOptions(
    projects
      .command('get')
      .description('Show a project')
      .argument('<project>', 'the project, by id or name'),
  ).action(
    runs(async (ctx, ref: string) => {
      const id = await ctx.projectId(ref);
      const project = await unwrap(getProject({ client: ctx.api(), path: { id } }));
      ctx.out.result(
        project,
        () => `${showProject(project)}\n${renderFields([['databases', project.database_count]])}`,
        () => project.id,
      );
    }),
  );

  withCommonOptions(
    projects
      .command('delete')
      .description('Delete a project')
      .argument('<project>', 'the project, by id or name')
      .option('--force', 'also delete its databases, their backups and WAL'),
  ).action(
    runs(async (ctx, ref: string) => {
      const id = await ctx.projectId(ref);
      const force = (ctx.options as { force?: boolean }).force === true;
      const deleted = await unwrap(
        deleteProject({ client: ctx.api(), path: { id }, ...(force ? { query: { force } } : {}) }),
      );
      ctx.out.result(
        deleted,
        () => `Deleted project ${ref} (${deleted.id}).`,
        () => deleted.id,
      );
    }),
  );

  withCommonOptions(
    program.command('regions').description('List the regions of the deployment'),
  ).action(
    runs(async (ctx) => {
      const answer = await unwrap(listRegions({ client: ctx.api() }));
      ctx.out.result(
        answer,
        () =>
          renderTable(answer.regions, [
            { header: 'id', value: (r) => r.id },
            { header: 'name', value: (r) => r.name },
          ]),
        () => answer.regions.map((r) => r.id).join('\n'),
      );
    }),
  );

  withCommonOptions(
    program
      .command('use')
      .description('Choose the project that later commands work in without --project')
      .argument('<project>', 'the project, by id or name'),
  ).action(
    runs(async (ctx, ref: string) => {
      const project = await ctx.resolveProject(ref);
      const path = configPath(ctx.env);
      writePrivateJsonFile(path, { ...readJsonFile<CliConfig>(path), project: project.id });
      ctx.out.result(
        project,
        () => `Now using project ${project.name} (${project.id}).`,
        () => project.id,
      );
    }),
  );
}

function showProject(project: Project): string {
  return renderFields([
    ['id', project.id],
    ['name', project.name],
    ['region', project.default_region],
    ['created', project.created_at],
  ]);
}
