/**
 * The e2e suites in groups. Each group is a test file of its own (groups/<name>.e2e.ts), so
 * a process with its own shared stack, and its suites run one after another. Few groups:
 * a stack takes some 18 s of CPU to start. A suite belongs to the areas its name
 * says (`restore-progress`: restore, progress) and to those of SUITE_AREAS; `npm test --
 * <area>` runs those suites and the unit and integration files whose path names the area.
 */
export interface E2eGroup {
  name: string;
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

/**
 * In the order they run. `npm test` runs lint and the integration and unit files beside
 * the first groups, so those come first whose suites are furthest from a minute each.
 */
export const E2E_GROUPS: readonly E2eGroup[] = [
  {
    // Apps killed, cut off or out of room, each on a stack of its own.
    name: 'faults',
    scansLogs: true,
    suites: [
      'database-crashes',
      'storage-fence',
      'storage-fence-again',
      'storage-watermark',
      'restore-crashes',
      'backup-takeover',
      'pitr-takeover',
      'outages',
    ],
  },
  {
    name: 'daemon',
    suites: [
      'local-daemon-access',
      'local-daemon-templates',
      'local-daemon-refusals',
      'local-daemon-lifecycle',
      'local-daemon-expiry',
      'local-daemon-snapshots',
      'local-daemon-existing-server',
      'local-daemon-secrets',
      'local-daemon-search-path',
      'local-daemon-fuzz',
      'cli-local',
    ],
  },
  {
    // What runs on a schedule or a sweep, each on a stack of its own with short intervals.
    name: 'sweeps',
    scansLogs: true,
    suites: [
      'reconcile-quarantine',
      'database-capacity',
      'backup-schedule',
      'pitr-retention',
      'pitr-archive-health',
      'kubernetes-driver',
      'kubernetes-drills',
    ],
  },
  {
    // The API a client sees on the shared stack: sign-in, projects, databases, backups
    // and their download links, restores, the CLI.
    name: 'api',
    scansLogs: true,
    downloads: true,
    suites: [
      'http-edge',
      'device-flow',
      'authentication',
      'tokens',
      'projects',
      'openapi',
      'message-validation',
      'callee-checks',
      'databases',
      'database-expiry',
      'backups',
      'restores',
      'request-bodies',
      'restore-progress',
      'restore-cancellation',
      'browser-device-flow',
      'cli',
    ],
  },
  {
    // Restores to a point in time and restore drills on the shared stack, and suites of small
    // stacks of their own.
    name: 'pitr',
    scansLogs: true,
    suites: [
      'pitr',
      'pitr-restores',
      'pitr-restores-in-place',
      'drills',
      'credentials-rotation',
      'branches-at-points',
      'database-resize',
      'database-branches',
      'local-pull',
      'webhooks',
      'provisioner-search-path',
      'cascades',
      'idempotency',
      'management',
      'edge-hardening',
      'partial-stack',
      'local-idp-gate',
      'github-provider',
      'readme-quick-start',
    ],
  },
  {
    name: 'load',
    alone: true,
    scansLogs: true,
    containers: true,
    suites: [
      'rate-limits',
      'multi-gateway',
      'backup-faults',
      'backup-under-writes',
      'containers',
      'fuzz',
    ],
  },
];

/** Areas a suite belongs to beyond the words of its name. */
const SUITE_AREAS: Readonly<Record<string, readonly string[]>> = {
  'http-edge': ['gateway'],
  'edge-hardening': ['gateway'],
  'device-flow': ['gateway', 'auth'],
  authentication: ['gateway'],
  tokens: ['gateway', 'auth'],
  projects: ['gateway'],
  'partial-stack': ['gateway', 'auth'],
  'local-idp-gate': ['auth'],
  'github-provider': ['auth'],
  openapi: ['gateway'],
  'message-validation': ['gateway', 'messaging'],
  'callee-checks': ['messaging', 'restores', 'backups'],
  'request-bodies': ['gateway'],
  drills: ['restores', 'backups', 'pitr', 'provisioner'],
  'credentials-rotation': ['database', 'provisioner'],
  'database-resize': ['provisioner'],
  'database-branches': ['provisioner'],
  'branches-at-points': ['provisioner', 'pitr', 'database'],
  webhooks: ['notifications'],
  'reconcile-quarantine': ['database', 'provisioner'],
  'database-capacity': ['provisioner'],
  'database-crashes': ['provisioner'],
  'storage-fence': ['database', 'provisioner'],
  'storage-fence-again': ['database', 'provisioner'],
  'storage-watermark': ['database', 'provisioner'],
  'provisioner-search-path': ['restores', 'pitr'],
  'kubernetes-driver': ['provisioner'],
  'kubernetes-drills': ['provisioner'],
  cascades: ['database', 'project'],
  idempotency: ['gateway'],
  outages: ['messaging'],
  management: ['observability'],
  'browser-device-flow': ['gateway', 'auth'],
  'rate-limits': ['gateway'],
  'multi-gateway': ['gateway'],
  containers: ['deploy'],
  fuzz: ['gateway'],
  'cli-local': ['daemon'],
  'local-pull': ['daemon', 'cli', 'backups', 'pitr'],
  'readme-quick-start': ['cli', 'docs'],
};

/** An area as paths and suite names spell it: `restores` and `restore` are one area. */
function stem(area: string): string {
  return area.toLowerCase().replace(/s$/, '');
}

/** True when the suite belongs to the area, by its own name or by SUITE_AREAS. */
function suiteInArea(suite: string, area: string): boolean {
  const tags = SUITE_AREAS[suite] ?? [];
  return suite.includes(stem(area)) || tags.some((name) => stem(name) === stem(area));
}

/** Every area a suite is known by, for `npm test -- <area>`'s help. */
export const AREAS: readonly string[] = [
  ...new Set(Object.values(SUITE_AREAS).flat()),
  'backups',
  'cli',
  'databases',
  'kubernetes',
  'pitr',
  'restores',
].sort();

/** The suites of an area, by name. */
export function suitesOfArea(area: string): Set<string> {
  return new Set(
    E2E_GROUPS.flatMap((group) => group.suites.filter((suite) => suiteInArea(suite, area))),
  );
}

/** Packages in an area their path does not name: the Kubernetes stand-ins. */
const PACKAGE_AREAS: Readonly<Record<string, readonly string[]>> = {
  'libs/kube-stand-in/': ['kubernetes'],
};

/** True when a unit or integration test file's path names the area, or its package is in it. */
export function specMatchesArea(path: string, area: string): boolean {
  const lower = path.toLowerCase();
  const areas = Object.entries(PACKAGE_AREAS).flatMap(([dir, names]) =>
    lower.startsWith(dir) ? names : [],
  );
  return lower.includes(stem(area)) || areas.some((name) => stem(name) === stem(area));
}

/** The groups that hold any of the suites (every group when `suites` is undefined). */
export function groupsOf(suites?: ReadonlySet<string>): E2eGroup[] {
  return E2E_GROUPS.filter((group) => !suites || group.suites.some((s) => suites.has(s)));
}

/** The suites PGCLOUD_E2E_SUITES names (set by `npm test -- <area>`), or undefined for all. */
export function selectedSuites(value: string | undefined): Set<string> | undefined {
  return value ? new Set(value.split(',')) : undefined;
}
