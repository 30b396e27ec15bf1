-- How long each agent takes to reach the truth, and how long it is wrong.
--
-- Over every (incident, topic) with a resolution on which the agent held beliefs:
-- how many it ended right on (converged), the mean time from the incident's first
-- event to the moment it settled on the truth for good (of those converged), and the
-- recorded time it spent answering something else (asof diff's time wrong).
-- An agent id that names its model (sre-claude, triage-o3) makes this "by model" too.
SELECT agent,
       count(*) AS questions,
       count(converged_at) AS converged,
       avg(time_to_truth_ms) AS mean_time_to_truth_ms,
       sum(time_wrong_ms) AS time_wrong_ms,
       avg(time_wrong_ms) AS mean_time_wrong_ms
FROM outcomes
GROUP BY agent
ORDER BY agent;
