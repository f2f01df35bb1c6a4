import type { Manifest } from './manifests.js';

/** One rule of a Role or ClusterRole, as RBAC reads it. */
interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs: string[];
}

interface Binding extends Manifest {
  roleRef: { kind: string; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
}

/**
 * One grant: a verb on a resource, where (a namespace, or `cluster-wide`), limited to some
 * names or not. Rows of a table a spec can compare whole.
 */
export interface Grant {
  where: string;
  resource: string;
  verbs: string;
  names?: string;
}

/**
 * Everything the bindings of an overlay grant a ServiceAccount, one row per rule and
 * resource, with the verbs sorted. A Role's rules count in its own namespace, a
 * ClusterRole's everywhere when a ClusterRoleBinding binds it and in the binding's
 * namespace when a RoleBinding does.
 */
export function grantsTo(objects: Manifest[], namespace: string, name: string): Grant[] {
  const roles = new Map(
    objects
      .filter((o) => o.kind === 'Role' || o.kind === 'ClusterRole')
      .map((o) => [`${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`, o]),
  );
  const bindings = objects.filter(
    (o): o is Binding =>
      (o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding') &&
      ((o as Binding).subjects ?? []).some(
        (s) => s.kind === 'ServiceAccount' && s.name === name && s.namespace === namespace,
      ),
  );
  const grants: Grant[] = [];
  for (const binding of bindings) {
    const roleNamespace = binding.roleRef.kind === 'Role' ? binding.metadata.namespace : '';
    const role = roles.get(
      `${binding.roleRef.kind}/${roleNamespace ?? ''}/${binding.roleRef.name}`,
    );
    if (!role)
      throw new Error(`${binding.kind}/${binding.metadata.name}: no ${binding.roleRef.name}`);
    const where =
      binding.kind === 'ClusterRoleBinding' ? 'cluster-wide' : (binding.metadata.namespace ?? '');
    for (const rule of (role as Manifest & { rules?: PolicyRule[] }).rules ?? [])
      for (const group of rule.apiGroups ?? [''])
        for (const resource of rule.resources ?? [])
          grants.push({
            where,
            resource: group ? `${group}/${resource}` : resource,
            verbs: [...rule.verbs].sort().join(' '),
            ...(rule.resourceNames ? { names: [...rule.resourceNames].sort().join(' ') } : {}),
          });
  }
  return grants.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}
