-- How often the answer was wrong when the incident was declared.
--
-- asof's record ends at the incident's last event; that is the moment read here. For
-- each (incident, topic) with a resolution, one claim at a time (cardinality one), that
-- any agent held beliefs on: the agents' answer then, as `asof answer --at END` gives it
-- -- right (every agent holding a belief holds the truth), wrong (they agree on another
-- claim), conflicted (they disagree), or unanswered (nobody holds one any more).
WITH final AS (
  SELECT o.incident, o.topic,
         any_value(o.truth) AS truth,
         count(DISTINCT o.final_claim) AS claims,
         min(o.final_claim) AS claim
  FROM outcomes o
  JOIN topics t ON t.incident = o.incident AND t.topic = o.topic
  WHERE t.cardinality = 'one'
  GROUP BY o.incident, o.topic
)
SELECT count(*) AS questions,
       count(*) FILTER (WHERE claims = 1 AND claim = truth) AS right,
       count(*) FILTER (WHERE claims = 1 AND claim <> truth) AS wrong,
       count(*) FILTER (WHERE claims > 1) AS conflicted,
       count(*) FILTER (WHERE claims = 0) AS unanswered,
       round(100.0 * count(*) FILTER (WHERE NOT (claims = 1 AND claim = truth)) / count(*), 1)
         AS not_right_percent
FROM final;
