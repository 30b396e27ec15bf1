-- Stale or unsupported beliefs still held when the incident was declared (its last event).
--
-- Per agent: the belief versions held at the end, how many had gone stale (no support
-- for longer than their topic's stale_after), and how many were unsupported (every
-- evidence item they cite rejected or stale by then), as `asof believed --at END` shows them.
SELECT agent,
       count(*) AS held_at_end,
       count(*) FILTER (WHERE freshness = 'stale') AS stale,
       count(*) FILTER (WHERE support = 'unsupported') AS unsupported,
       count(*) FILTER (WHERE freshness = 'stale' OR support = 'unsupported') AS stale_or_unsupported
FROM versions
WHERE superseded_at IS NULL
GROUP BY agent
ORDER BY agent;
