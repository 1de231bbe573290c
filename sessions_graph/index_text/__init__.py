"""The index text: how text is cut into words and turn documents, shared by
the engines (which write the turn index) and recall (which searches it).

It sits below both, so that neither imports the other to agree on a word.
Modules: ``words`` (tokens, CJK, long words, stop words, a question's
terms), ``forms`` (irregular word forms), ``turns`` (turn documents,
Speakers, Asking Turns, Time Cues), ``records`` (the entity records both
engines build for recall's entity lane).
"""
