import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ROOT } from './manifests.js';

/** deploy/monitoring: the alerting rules, their tests and the Grafana dashboard. */
export const MONITORING_DIR = join(ROOT, 'deploy', 'monitoring');

export interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface RuleGroup {
  name: string;
  rules: Rule[];
}

/** A panel as these checks read Grafana's dashboard model. */
export interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  datasource: { type: string; uid: string };
  targets: { refId: string; expr: string; datasource?: { type: string; uid: string } }[];
}

export interface Dashboard {
  title: string;
  uid: string;
  schemaVersion: number;
  templating: { list: { name: string; type: string; query: string }[] };
  panels: Panel[];
}

export function ruleGroups(): RuleGroup[] {
  const file = parse(readFileSync(join(MONITORING_DIR, 'pgcloud.rules.yml'), 'utf8')) as {
    groups: RuleGroup[];
  };
  return file.groups;
}

export function dashboard(): Dashboard {
  return JSON.parse(
    readFileSync(join(MONITORING_DIR, 'grafana-dashboard.json'), 'utf8'),
  ) as Dashboard;
}

/**
 * The metric names an expression reads, as the apps export them: a histogram's `_bucket`,
 * `_count` and `_sum` series are its own name.
 */
export function metricsOf(expr: string): string[] {
  return [...new Set([...expr.matchAll(/\bpgcloud_[a-z_]+/g)].map(([name]) => name))].map((name) =>
    name.replace(/_(bucket|count|sum)$/, ''),
  );
}

/** Every metric a rule or a panel of deploy/monitoring reads. */
export function monitoredMetrics(): string[] {
  const exprs = [
    ...ruleGroups().flatMap((group) => group.rules.map((rule) => rule.expr)),
    ...dashboard().panels.flatMap((panel) => panel.targets.map((target) => target.expr)),
  ];
  return [...new Set(exprs.flatMap(metricsOf))].sort();
}
