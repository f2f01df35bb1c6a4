import { Column, Entity, PrimaryColumn } from 'typeorm';
import { bytesColumn, lsnColumn, nullableBytesColumn } from './archive.entity.js';

/** A completed WAL segment in S3. */
@Entity({ schema: 'pitr', name: 'segments' })
export class SegmentEntity {
  @PrimaryColumn({ name: 'database_id', type: 'text' })
  databaseId: string;

  /** The segment's file name, which holds its timeline and number. */
  @PrimaryColumn({ type: 'text' })
  name: string;

  @Column({ type: 'integer' })
  timeline: number;

  @Column({ type: 'bigint', transformer: lsnColumn })
  segno: bigint;

  @Column({ name: 'object_key', type: 'text' })
  objectKey: string;

  /**
   * Stored as the pieces it was uploaded in while it was written: where each ends, in
   * order (wal-keys.ts names them). Null: one object at objectKey.
   */
  @Column({ name: 'piece_ends', type: 'integer', array: true, nullable: true })
  pieceEnds: number[] | null;

  /**
   * The ETag the object store answered for each of its objects (the pieces in order), so a
   * listing tells one that went missing or changed; null for segments archived before.
   */
  @Column({ type: 'text', array: true, nullable: true })
  etags: (string | null)[] | null;

  /** The segment's own size (a whole segment's, 16 MiB), however it is stored. */
  @Column({ name: 'size_bytes', type: 'bigint', transformer: bytesColumn })
  sizeBytes: number;

  /**
   * Stored zstd-compressed as one object at objectKey (`….zst`): that object's size. Null:
   * stored as is, one object or pieces.
   */
  @Column({ name: 'zstd_bytes', type: 'bigint', nullable: true, transformer: nullableBytesColumn })
  zstdBytes: number | null;

  /**
   * The newest moment every commit stamped at or before which lies in this segment or an
   * earlier one (from the primary's samples); null when no sample told.
   */
  @Column({ name: 'covered_until', type: 'timestamptz', nullable: true })
  coveredUntil: Date | null;

  @Column({ name: 'archived_at', type: 'timestamptz' })
  archivedAt: Date;
}
