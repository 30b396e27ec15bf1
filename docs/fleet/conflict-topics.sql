-- Topics on which agents conflict most.
--
-- A topic is in conflict while its agents' working answers name more than one claim
-- (agents holding no belief do not count): the agreement table's `conflicted`, which asof
-- writes from the same answers as the answers table. Per topic id, across the fleet: in
-- how many incidents its agents ever conflicted, and for how long in all (recorded time,
-- seconds), from each change to the next or to the incident's last event.
WITH spans AS (
  SELECT a.incident, a.topic, a.conflicted,
         epoch_us(coalesce(lead(a.recorded_at) OVER (PARTITION BY a.incident, a.topic ORDER BY a.recorded_at),
                           n.last_recorded_at)) - epoch_us(a.recorded_at) AS held_us
  FROM agreement a
  JOIN incidents n ON n.incident = a.incident
)
SELECT topic,
       count(DISTINCT incident) AS incidents,
       sum(held_us) / 1e6 AS conflicted_s
FROM spans
WHERE conflicted
GROUP BY topic
ORDER BY conflicted_s DESC, topic;
