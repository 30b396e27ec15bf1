-- Topics on which agents conflict most.
--
-- A topic is in conflict while its agents' working answers name more than one claim
-- (agents holding no belief do not count): the agreement table's `conflicted`, which asof
-- writes from the same answers as the answers table, each row holding from `recorded_at`
-- until the next change or the incident's last event. Per topic id, across the fleet: in
-- how many incidents its agents ever conflicted, and for how long in all (recorded time,
-- seconds).
SELECT topic,
       count(DISTINCT incident) AS incidents,
       sum(epoch_us("until") - epoch_us(recorded_at)) / 1e6 AS conflicted_s
FROM agreement
WHERE conflicted
GROUP BY topic
ORDER BY conflicted_s DESC, topic;
