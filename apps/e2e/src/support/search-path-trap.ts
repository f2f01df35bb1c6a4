/**
 * What the owner of a database can do to a superuser session that takes the database's
 * search_path: put `public` before the catalog and plant there an `=` on oids, which
 * catalog reads use in their joins. The planted function notes who ran it in
 * public.calls; a session that resolves names in the catalog only runs none of it.
 */
export const PLANT_SQL = (database: string): string => `
  CREATE TABLE public.calls (caller name NOT NULL);
  CREATE FUNCTION public.oid_equal(oid, oid) RETURNS boolean LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO public.calls VALUES (current_user);
      RETURN $1 OPERATOR(pg_catalog.=) $2;
    END $$;
  CREATE OPERATOR public.= (LEFTARG = oid, RIGHTARG = oid, FUNCTION = public.oid_equal);
  ALTER DATABASE "${database}" SET search_path = public, pg_catalog;`;

/** Whether the trap works: a session of the owner's, taking the database's search_path. */
export const SPRING_SQL = 'SELECT 1::oid = 1::oid';

/** Who ran the planted function, in order. */
export const CALLERS_SQL = 'SELECT caller FROM public.calls';
