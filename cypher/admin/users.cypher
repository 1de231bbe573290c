// Every user, for drop(): each is forgotten the way forget_user does it.
MATCH (u:User)
RETURN u.user_id AS user_id
