import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UNMATCHED_ROUTE, routeLabel } from './http-metrics.js';

describe('routeLabel', () => {
  it('names the route template, not the URL with its ids', () => {
    assert.equal(
      routeLabel({ is404: false, routeOptions: { url: '/projects/:projectId/databases/:name' } }),
      '/projects/:projectId/databases/:name',
    );
  });

  it('puts every request no route took under one label', () => {
    assert.equal(routeLabel({ is404: true, routeOptions: { url: '/*' } }), UNMATCHED_ROUTE);
    assert.equal(routeLabel({ is404: false, routeOptions: {} }), UNMATCHED_ROUTE);
  });
});
