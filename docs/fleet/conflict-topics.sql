-- Topics on which agents conflict most.
--
-- A topic is in conflict while two agents' working answers differ (agents holding no
-- belief do not count). Per topic id, across the fleet: in how many incidents its agents
-- ever conflicted, and for how long in all (recorded time, seconds), from each answer
-- change to the next or to the incident's last event.
WITH instants AS (SELECT DISTINCT incident, topic, recorded_at AS instant FROM answers),
agents_of AS (SELECT DISTINCT incident, topic, agent FROM answers),
held AS (
  SELECT i.incident, i.topic, i.instant, a.claim
  FROM instants i
  JOIN agents_of g ON g.incident = i.incident AND g.topic = i.topic
  ASOF LEFT JOIN answers a
    ON a.incident = i.incident AND a.topic = i.topic AND a.agent = g.agent AND a.recorded_at <= i.instant
),
states AS (
  SELECT incident, topic, instant, count(DISTINCT claim) AS claims
  FROM held
  GROUP BY incident, topic, instant
),
spans AS (
  SELECT s.incident, s.topic, s.claims,
         epoch_us(coalesce(lead(s.instant) OVER (PARTITION BY s.incident, s.topic ORDER BY s.instant),
                           n.last_recorded_at)) - epoch_us(s.instant) AS held_us
  FROM states s
  JOIN incidents n ON n.incident = s.incident
)
SELECT topic,
       count(DISTINCT incident) AS incidents,
       sum(held_us) / 1e6 AS conflicted_s
FROM spans
WHERE claims > 1
GROUP BY topic
ORDER BY conflicted_s DESC, topic;
