// How many actions are kept out of recall, injection and extraction, by origin.
MATCH (a:Action)
WHERE a.origin IN ['derived', 'client']
RETURN a.origin AS origin, count(a) AS actions
