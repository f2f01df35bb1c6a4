/** An owner reference, as far as garbage collection reads it. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** ObjectMeta as the test API stores it: the fields it owns are always set. */
export interface StoredMetadata {
  name: string;
  namespace?: string;
  uid: string;
  resourceVersion: string;
  generation: number;
  creationTimestamp: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  [field: string]: unknown;
}

/** An object as the test API stores and answers it. */
export interface StoredObject {
  apiVersion: string;
  kind: string;
  metadata: StoredMetadata;
  [field: string]: unknown;
}

/** Change notifications, as watches stream them. */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';
