/**
 * The e2e suites in groups. Each group is a test file of its own (groups/<name>.e2e.ts), so
 * a process with its own shared stack: groups run side by side, the suites of one group one
 * after another. A suite belongs to the areas its name says (`restore-progress`: restore,
 * progress) and to the group's; `npm test -- <area>` runs those suites and the unit and
 * integration files whose path names the area.
 */
export interface E2eGroup {
  name: string;
  /** What `npm test -- <area>` knows this group's suites by, beyond their own names. */
  areas: readonly string[];
  suites: readonly string[];
  /**
   * Loads the machine itself or measures behaviour under load: runs after the others, with
   * the machine to itself.
   */
  alone?: boolean;
  /** Ends with the scan of its stacks' logs for every secret handed out (the cloud stack). */
  scansLogs?: boolean;
  /** Hands out pre-signed download links, so the scan looks for their signatures too. */
  downloads?: boolean;
  /** Builds and runs the container image (needs the Docker engine). */
  containers?: boolean;
}

export const E2E_GROUPS: readonly E2eGroup[] = [
  {
    name: 'edge',
    areas: ['gateway'],
    scansLogs: true,
    suites: [
      'http-edge',
      'edge-hardening',
      'device-flow',
      'authentication',
      'projects',
      'openapi',
      'message-validation',
      'request-bodies',
      'management',
      'browser-device-flow',
    ],
  },
  {
    name: 'stacks',
    areas: ['gateway'],
    scansLogs: true,
    suites: ['partial-stack', 'local-idp-gate', 'github-provider', 'idempotency'],
  },
  {
    name: 'limits',
    areas: ['gateway'],
    alone: true,
    scansLogs: true,
    suites: ['rate-limits', 'multi-gateway'],
  },
  {
    name: 'databases',
    areas: ['database', 'provisioner'],
    scansLogs: true,
    suites: ['databases', 'database-capacity', 'cascades'],
  },
  {
    name: 'database-faults',
    areas: ['database', 'provisioner'],
    scansLogs: true,
    suites: ['database-crashes', 'reconcile-quarantine'],
  },
  {
    name: 'backups',
    areas: ['backup'],
    scansLogs: true,
    downloads: true,
    suites: ['backups', 'backup-schedule', 'backup-takeover'],
  },
  {
    name: 'backup-load',
    areas: ['backup'],
    alone: true,
    scansLogs: true,
    suites: ['backup-faults', 'backup-under-writes'],
  },
  {
    name: 'restores',
    areas: ['restore'],
    scansLogs: true,
    suites: ['restores', 'restore-progress', 'restore-crashes'],
  },
  {
    name: 'pitr',
    areas: ['pitr'],
    scansLogs: true,
    suites: ['pitr', 'pitr-restores'],
  },
  {
    name: 'pitr-leases',
    areas: ['pitr'],
    scansLogs: true,
    suites: ['pitr-takeover', 'pitr-retention'],
  },
  {
    name: 'kubernetes',
    areas: ['kubernetes', 'provisioner'],
    scansLogs: true,
    suites: ['kubernetes-driver'],
  },
  {
    name: 'operations',
    areas: ['cli', 'deploy'],
    scansLogs: true,
    suites: ['outages', 'cli'],
  },
  {
    name: 'containers',
    areas: ['deploy', 'container'],
    alone: true,
    scansLogs: true,
    containers: true,
    suites: ['containers', 'fuzz'],
  },
  {
    name: 'daemon',
    areas: ['daemon', 'local'],
    suites: [
      'local-daemon-access',
      'local-daemon-templates',
      'local-daemon-refusals',
      'local-daemon-lifecycle',
      'local-daemon-existing-server',
      'local-daemon-secrets',
      'cli-local',
    ],
  },
];

/** An area as paths and suite names spell it: `restores` and `restore` are one area. */
function stem(area: string): string {
  return area.toLowerCase().replace(/s$/, '');
}

/** True when the suite belongs to the area, by its own name or by its group's areas. */
function suiteInArea(group: E2eGroup, suite: string, area: string): boolean {
  return suite.includes(stem(area)) || group.areas.some((name) => stem(name) === stem(area));
}

/** The suites of an area, by name. */
export function suitesOfArea(area: string): Set<string> {
  return new Set(
    E2E_GROUPS.flatMap((group) => group.suites.filter((suite) => suiteInArea(group, suite, area))),
  );
}

/** True when a unit or integration test file's path names the area. */
export function specMatchesArea(path: string, area: string): boolean {
  return path.toLowerCase().includes(stem(area));
}

/** The groups that hold any of the suites (every group when `suites` is undefined). */
export function groupsOf(suites?: ReadonlySet<string>): E2eGroup[] {
  return E2E_GROUPS.filter((group) => !suites || group.suites.some((s) => suites.has(s)));
}

/** The suites PGCLOUD_E2E_SUITES names (set by `npm test -- <area>`), or undefined for all. */
export function selectedSuites(value: string | undefined): Set<string> | undefined {
  return value ? new Set(value.split(',')) : undefined;
}
