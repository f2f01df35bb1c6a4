import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse, stringify } from 'yaml';
import { render, schemaProblems } from './manifests.js';
import type { RuleGroup } from './monitoring.js';
import {
  MONITORING_DIR,
  dashboard,
  metricsOf,
  monitoredMetrics,
  ruleGroups,
} from './monitoring.js';
import { KUBERNETES_DIR } from './manifests.js';

/** promtool, from Debian's prometheus package (npm test installs it). */
function promtool(...args: string[]): string {
  return execFileSync('promtool', args, { cwd: MONITORING_DIR, encoding: 'utf8' });
}

interface AlertTest {
  alertname: string;
  exp_alerts: unknown[];
}

describe('deploy/monitoring: alerting rules and the dashboard', () => {
  const groups = ruleGroups();
  const alerts = groups.flatMap((group) => group.rules.flatMap((rule) => rule.alert ?? []));

  it('passes promtool check rules', () => {
    assert.match(promtool('check', 'rules', 'pgcloud.rules.yml'), /SUCCESS/);
  });

  it('passes promtool test rules, with each alert firing and not firing', () => {
    promtool('test', 'rules', 'tests.yml');
    const tests = (
      parse(readFileSync(join(MONITORING_DIR, 'tests.yml'), 'utf8')) as {
        tests: { alert_rule_test?: AlertTest[] }[];
      }
    ).tests.flatMap((test) => test.alert_rule_test ?? []);
    for (const alert of alerts) {
      const mine = tests.filter((test) => test.alertname === alert);
      assert.ok(
        mine.some((test) => test.exp_alerts.length > 0),
        `${alert} fires in a test`,
      );
      assert.ok(
        mine.some((test) => test.exp_alerts.length === 0),
        `${alert} stays quiet in one`,
      );
    }
  });

  it('gives every alert a severity, a summary and a runbook in the docs', () => {
    const operating = readFileSync(
      join(MONITORING_DIR, '..', '..', 'docs', 'operating.md'),
      'utf8',
    );
    for (const rule of groups.flatMap((group) => group.rules)) {
      assert.ok(
        ['critical', 'warning', 'info'].includes(rule.labels?.['severity'] ?? ''),
        rule.alert,
      );
      assert.ok(rule.annotations?.['summary'], `${rule.alert} has a summary`);
      const runbook = rule.annotations?.['runbook'] ?? '';
      assert.match(runbook, /^docs\/[a-z/]+\.md#[a-z0-9-]+$/, `${rule.alert}: ${runbook}`);
      if (runbook.startsWith('docs/operating.md#')) {
        const anchor = runbook.split('#')[1] ?? '';
        const headings = [...operating.matchAll(/^#+ (.+)$/gm)].map(([, title = '']) =>
          title
            .toLowerCase()
            .replace(/[^a-z0-9 -]/g, '')
            .replace(/ /g, '-'),
        );
        assert.ok(headings.includes(anchor), `docs/operating.md has #${anchor}`);
      }
    }
  });

  it('holds the same groups in the PrometheusRule, which the production overlay renders valid', () => {
    const rule = parse(readFileSync(join(MONITORING_DIR, 'prometheus-rule.yaml'), 'utf8')) as {
      spec: { groups: RuleGroup[] };
    };
    assert.deepEqual(rule.spec.groups, groups);
    const rendered = render(join(KUBERNETES_DIR, 'overlays', 'production')).filter(
      (object) => object.kind === 'PrometheusRule',
    );
    assert.equal(rendered.length, 1);
    assert.deepEqual(rendered.flatMap(schemaProblems), []);
  });

  it('is a Grafana dashboard: a Prometheus datasource variable, panels on the grid, queries that parse', () => {
    const board = dashboard();
    assert.ok(board.title && board.uid && Number.isInteger(board.schemaVersion));
    const variable = board.templating.list.find((v) => v.type === 'datasource');
    assert.deepEqual(variable && { name: variable.name, query: variable.query }, {
      name: 'datasource',
      query: 'prometheus',
    });
    const ids = board.panels.map((panel) => panel.id);
    assert.equal(new Set(ids).size, ids.length, 'panel ids are unique');
    for (const panel of board.panels) {
      assert.ok(['timeseries', 'stat', 'gauge', 'table'].includes(panel.type), panel.title);
      const { x, y, w, h } = panel.gridPos;
      assert.ok(x >= 0 && w > 0 && x + w <= 24 && y >= 0 && h > 0, `${panel.title} fits the grid`);
      assert.deepEqual(panel.datasource, { type: 'prometheus', uid: '${datasource}' });
      assert.ok(panel.targets.length > 0, `${panel.title} has a query`);
      const refIds = panel.targets.map((target) => target.refId);
      assert.equal(new Set(refIds).size, refIds.length, `${panel.title}: refIds are unique`);
    }
    // Each query as a recording rule: promtool parses the PromQL.
    const dir = mkdtempSync(join(tmpdir(), 'pgcloud-dashboard-'));
    try {
      const rules = board.panels.flatMap((panel) =>
        panel.targets.map((target, i) => ({
          record: `dashboard:panel_${panel.id}_${i}`,
          expr: target.expr,
        })),
      );
      writeFileSync(
        join(dir, 'queries.yml'),
        stringify({ groups: [{ name: 'dashboard', rules }] }),
      );
      assert.match(promtool('check', 'rules', join(dir, 'queries.yml')), /SUCCESS/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads metrics by their exported names', () => {
    assert.deepEqual(
      metricsOf(
        'histogram_quantile(0.9, sum by (le) (rate(pgcloud_backup_duration_seconds_bucket[1h])))',
      ),
      ['pgcloud_backup_duration_seconds'],
    );
    assert.ok(monitoredMetrics().includes('pgcloud_pitr_archives'));
  });
});
