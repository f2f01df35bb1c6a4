import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In } from 'typeorm';
import type { EntityManager } from 'typeorm';
import { SegmentEntity } from './segment.entity.js';

/** A completed segment just put in S3. */
export interface ArchivedSegment {
  databaseId: string;
  name: string;
  timeline: number;
  segno: bigint;
  objectKey: string;
  sizeBytes: number;
  /** Stored as pieces: where each ends (their keys are objectKey's, see wal-keys.ts). */
  pieceEnds?: number[];
  /** Stored zstd-compressed as one object: its size. */
  zstdBytes?: number;
  /** The ETag of each object (the pieces in order), as the store answered or listed it. */
  etags?: (string | null)[];
  /** Every commit stamped at or before this moment lies in this segment or before. */
  coveredUntil?: Date | null;
}

/** The archive's segments from its first one on its timeline, for the WAL listing. */
export interface SegmentListing {
  databaseId: string;
  timeline: number;
  firstSegno: bigint;
}

/** One page of the WAL listing, and the totals of the whole list. */
export interface SegmentPage {
  /** Up to `limit + 1` segments: one more than asked tells that a next page exists. */
  segments: SegmentEntity[];
  count: number;
  sizeBytes: number;
}

/** The rows of pitr.segments: the completed WAL segments in S3. */
@Injectable()
export class SegmentRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Records an uploaded segment; one recorded before (a retry, another replica) stays. */
  async record(segment: ArchivedSegment): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO pitr.segments
         (database_id, name, timeline, segno, object_key, size_bytes, piece_ends, etags,
          covered_until, zstd_bytes)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING`,
      [
        segment.databaseId,
        segment.name,
        segment.timeline,
        segment.segno.toString(),
        segment.objectKey,
        segment.sizeBytes,
        segment.pieceEnds ?? null,
        segment.etags ?? null,
        segment.coveredUntil ?? null,
        segment.zstdBytes ?? null,
      ],
    );
  }

  /** The archive's segments on `timeline`, oldest first (what a restore plan links to). */
  onTimeline(databaseId: string, timeline: number): Promise<SegmentEntity[]> {
    return this.dataSource.manager.find(SegmentEntity, {
      where: { databaseId, timeline },
      order: { segno: 'ASC' },
    });
  }

  /**
   * Up to `limit` segments the window no longer needs, by name: those of other timelines
   * and those before `keepSegno`.
   */
  beforeRetention(
    databaseId: string,
    timeline: number,
    keepSegno: bigint,
    limit: number,
  ): Promise<SegmentEntity[]> {
    return this.dataSource
      .getRepository(SegmentEntity)
      .createQueryBuilder('s')
      .where('s.database_id = :id', { id: databaseId })
      .andWhere('(s.timeline <> :timeline OR s.segno < :keep)', {
        timeline,
        keep: keepSegno.toString(),
      })
      .orderBy('s.name')
      .limit(limit)
      .getMany();
  }

  /** The page after `cursor` (a segment name) of the archive's current segments. */
  async page(
    listing: SegmentListing,
    cursor: string | undefined,
    limit: number,
  ): Promise<SegmentPage> {
    const current = this.dataSource
      .getRepository(SegmentEntity)
      .createQueryBuilder('s')
      .where('s.database_id = :id', { id: listing.databaseId })
      .andWhere('s.timeline = :timeline', { timeline: listing.timeline })
      .andWhere('s.segno >= :first', { first: listing.firstSegno.toString() });
    const totals = await current
      .clone()
      .select('count(*)', 'count')
      .addSelect('coalesce(sum(s.size_bytes), 0)', 'size')
      .getRawOne<{ count: string; size: string }>();
    const segments = await current
      .clone()
      .andWhere(cursor === undefined ? 'true' : 's.name > :cursor', { cursor })
      .orderBy('s.name', 'ASC')
      .limit(limit + 1)
      .getMany();
    return {
      segments,
      count: Number(totals?.count ?? 0),
      sizeBytes: Number(totals?.size ?? 0),
    };
  }

  /** The records of these segments, by name. */
  named(databaseId: string, names: readonly string[]): Promise<SegmentEntity[]> {
    if (names.length === 0) return Promise.resolve([]);
    return this.dataSource.manager.find(SegmentEntity, {
      where: { databaseId, name: In([...names]) },
    });
  }

  async deleteEach(segments: readonly Pick<SegmentEntity, 'databaseId' | 'name'>[]): Promise<void> {
    await this.dataSource
      .getRepository(SegmentEntity)
      .delete(segments.map((s) => ({ databaseId: s.databaseId, name: s.name })));
  }

  /** Every segment record of the database. */
  async deleteAll(databaseId: string, manager?: EntityManager): Promise<void> {
    await (manager ?? this.dataSource.manager).delete(SegmentEntity, { databaseId });
  }
}
