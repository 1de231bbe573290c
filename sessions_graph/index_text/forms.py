"""Irregular word forms: "went" is a form of "go", and no stemmer knows it.

The embedded engine's Porter stemmer joins "painting" and "paints" to
"paint", but neither it nor Tantivy joins "go" and "went", "meet" and "met",
"child" and "children" (or even "die" and "died": Porter cuts the one to
"die", the other to "di"). A question asks in one form ("when did she go
camping?") and the turn that answers tells it in another ("we went camping
last week"). So a question's word that is one of English's irregular forms
is searched together with the other forms of its family.
"""

from __future__ import annotations

#: English irregular verbs (base, past, past participle) and nouns (singular,
#: plural), one family per line. Left out: verbs whose forms are all stop
#: words or question-framing words (be, have, do, get, say, tell, think), and
#: forms that are mostly other words ("rose", "lay", "bore", "wound").
_FAMILIES = """
arise arose arisen
awake awoke awoken
beat beaten
become became
begin began begun
bend bent
bite bit bitten
bleed bled
blow blew blown
break broke broken
breed bred
bring brought
build built
burn burnt
buy bought
catch caught
choose chose chosen
come came
creep crept
deal dealt
die died
dig dug
draw drew drawn
dream dreamt
drink drank drunk
drive drove driven
eat ate eaten
fall fell fallen
feed fed
feel felt
fight fought
find found
fly flew flown
forget forgot forgotten
forgive forgave forgiven
freeze froze frozen
give gave given
go goes went gone
grow grew grown
hang hung
hear heard
hide hid hidden
hold held
keep kept
kneel knelt
know knew known
lead led
leave left
lend lent
lose lost
make made
mean meant
meet met
pay paid
ride rode ridden
ring rang rung
run ran
see saw seen
seek sought
sell sold
send sent
sew sewn
shake shook shaken
shine shone
shoot shot
show shown
shrink shrank shrunk
sing sang sung
sink sank sunk
sit sat
sleep slept
slide slid
speak spoke spoken
spend spent
spin spun
stand stood
steal stole stolen
stick stuck
sting stung
strike struck
swear swore sworn
sweep swept
swim swam swum
swing swung
take took taken
teach taught
tear tore torn
throw threw thrown
understand understood
wake woke woken
wear wore worn
weep wept
win won
write wrote written
child children
foot feet
goose geese
man men
mouse mice
person people
tooth teeth
woman women
"""

#: Each form -> the other forms of its family.
OTHER_FORMS: dict[str, tuple[str, ...]] = {
    form: tuple(f for f in family if f != form)
    for family in map(str.split, _FAMILIES.strip().splitlines())
    for form in family
}
