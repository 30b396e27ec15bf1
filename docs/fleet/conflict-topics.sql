-- Topics on which agents conflict most.
--
-- A topic is in conflict while its agents' working answers name more than one claim
-- (agents holding no belief do not count). Per topic id, across the fleet: in how many
-- incidents its agents ever conflicted, and for how long in all (recorded time, seconds),
-- up to each incident's last event.
--
-- One pass over the answer changes: each agent holds a claim from one change to its
-- next; a claim's holders go up and down; the number of claims held changes when a
-- claim's holders leave or reach zero.
WITH held AS (
  SELECT incident, topic, claim, recorded_at AS since,
         lead(recorded_at) OVER (PARTITION BY incident, topic, agent ORDER BY recorded_at) AS until
  FROM answers
),
deltas AS (
  SELECT incident, topic, claim, since AS instant, 1 AS d FROM held WHERE claim IS NOT NULL
  UNION ALL
  SELECT incident, topic, claim, until, -1 FROM held WHERE claim IS NOT NULL AND until IS NOT NULL
),
per_claim AS (
  SELECT incident, topic, claim, instant, sum(d) AS d
  FROM deltas
  GROUP BY incident, topic, claim, instant
),
holders AS (
  SELECT incident, topic, instant, d,
         sum(d) OVER (PARTITION BY incident, topic, claim ORDER BY instant) AS after
  FROM per_claim
),
changes AS (
  SELECT incident, topic, instant,
         sum(CASE WHEN after > 0 AND after = d THEN 1
                  WHEN after = 0 AND d < 0 THEN -1
                  ELSE 0 END) AS c
  FROM holders
  GROUP BY incident, topic, instant
),
states AS (
  SELECT incident, topic, instant,
         sum(c) OVER (PARTITION BY incident, topic ORDER BY instant) AS claims,
         lead(instant) OVER (PARTITION BY incident, topic ORDER BY instant) AS next
  FROM changes
)
SELECT s.topic,
       count(DISTINCT s.incident) AS incidents,
       sum(epoch_us(coalesce(s.next, n.last_recorded_at)) - epoch_us(s.instant)) / 1e6 AS conflicted_s
FROM states s
JOIN incidents n ON n.incident = s.incident
WHERE s.claims > 1
GROUP BY s.topic
ORDER BY conflicted_s DESC, s.topic;
