-- Which evidence sources mislead agents most.
--
-- An item misleads when the agents would have settled on the truth sooner without it:
-- its what-if replay (asof influence) has a negative truth shift, over topics with a
-- resolution. Per source: how many such items, in how many incidents, and the delay
-- they caused in all (the truth shifts summed, as milliseconds of delay).
SELECT e.source,
       count(*) AS misleading_items,
       count(DISTINCT i.incident) AS incidents,
       -sum(i.truth_shift_ms) AS truth_delay_ms
FROM influence i
JOIN evidence e ON e.incident = i.incident AND e.id = i.evidence
WHERE i.truth_known AND i.truth_shift_ms < 0
GROUP BY e.source
ORDER BY truth_delay_ms DESC, e.source;
