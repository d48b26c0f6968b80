"""Sentence templates of the notes and the fixed phrase lists.

Templates use ``{SLOT}`` for PHI (upper-case slot names, one span each, or a few spans
for composite slots such as ``ADDR``) and ``{slot}`` for non-PHI content (vocabulary
items, doses, vitals, lab values, eponyms); :mod:`.slots` maps each name to the function
that writes it. Each template is compiled once into a plain and an abbreviated variant
(``patient`` -> ``pt``, ``with`` -> ``w/``, ...); a note uses the abbreviated variant with
its site's ``abbrev_rate``.
"""

from __future__ import annotations

import re

from ..vocab import ABBREVIATIONS

__all__ = []


_SLOT_RE = re.compile(r"\{(\w+)\}")
_ABBR_RES = [(re.compile(r"\b" + re.escape(k) + r"\b"), v) for k, v in
             sorted(ABBREVIATIONS.items(), key=lambda kv: -len(kv[0]))]


def _abbreviate(s: str) -> str:
    for rx, v in _ABBR_RES:
        s = rx.sub(v, s)
    return s


def _compile_template(src: str) -> tuple[tuple, tuple]:
    """``"{PT} is a ..."`` -> (plain pieces, abbreviated pieces); a piece is ``(is_slot, str)``."""
    parts = _SLOT_RE.split(src)
    plain, abbr = [], []
    for i, part in enumerate(parts):
        if i % 2 == 1:
            plain.append((True, part))
            abbr.append((True, part))
        elif part:
            plain.append((False, part))
            abbr.append((False, _abbreviate(part)))
    return tuple(plain), tuple(abbr)


def _compile_all(*srcs: str) -> list[tuple[tuple, tuple]]:
    return [_compile_template(s) for s in srcs]


HPI_OPEN = _compile_all(
    "{PT} is {aAGEA} {sexw} with a history of {comorb} who presents with {cc}.",
    "{PT} is {aAGEA} {sexw} with {dxprob} and {comorb} admitted for {cc}.",
    "This is {aAGEA} {sexw} with {comorb} who comes in complaining of {cc}.",
    "Patient is {aAGEA} {sexw}, known to {DR}, presenting with {cc}.",
    "{AGEA} {sexw} with history of {comorb}, here with {cc}.",
    "{PT}, {aAGEA} {prof_plain}, presents to the {DEPT} with {cc}.",
)
HPI_MORE = _compile_all(
    "{He} was in {his} usual state of health until {WEEKDAY} when {he} developed {cc}.",
    "{He} reports {cc} for the past {n} days.",
    "{He} was seen by {DR} at {OHOSP} on {PASTDATE} and started on {medname}.",
    "{He} was transferred from {OHOSP} for further management.",
    "Of note, {he} was admitted in {PASTMY} for {comorb}.",
    "{His} {relation} {REL} brought {him} to the {DEPT}.",
    "In the ED vitals were {vit}. {He} received {medline}.",
    "{He} denies chest pain, fevers or chills.",
    "{He} recently returned from a trip to {COUNTRY}.",
    "Symptoms started after a long walk at {LOCOTHER}.",
    "{He} has a known history of {eponym}, followed by {DR}.",
    "Initial labs were notable for {labval} and {labval}.",
    "{He} was last seen in clinic on {PASTDATE} by {PCP}.",
    "Per {his} {relation}, {he} has been more confused since {WEEKDAY}.",
    "{He} had {findingx} on arrival.",
    "{He} is s/p Whipple procedure and was followed by {DR}.",
    "{He} was first diagnosed with {comorb} in {his} {AGEDEC}.",
    "{He} presented to {OHOSP} in {CITY} on {PASTSHORT} and was transferred here.",
    "EMS found {him} at home; {his} neighbor called 911.",
    "{He} notes {cc} worse with exertion and relieved by rest.",
    "The patient's {relation}, {REL}, provided additional history by phone.",
    "{He} was started on {medline} by {PCP} on {PASTSHORT} without improvement.",
    "Outside records from {OHOSP} were reviewed.",
    "Prior admission {PASTMY} for similar symptoms, treated with {medname}.",
    "{He} took {his} last dose of {medname} on {PASTSHORT}.",
    "Review of systems otherwise negative x10.",
    "Family reports {he} fell at home over {HOLIDAY}.",
)
PMH = _compile_all("{comorb}", "{eponym}", "{dxprob}, dx {PASTYEAR}", "hypertension", "hyperlipidemia",
         "{comorb} (followed at {OHOSP})", "GERD", "osteoarthritis", "{comorb} since {PASTYEAR}", "depression",
         "atrial fibrillation on Coumadin", "BPH", "obesity, BMI 34")
PSH = _compile_all("cholecystectomy ({PASTYEAR})", "s/p appendectomy in {PASTYEAR}", "CABG x3 at {OHOSP} in {PASTYEAR}",
         "total knee replacement {PASTYEAR}", "cataract surgery", "{proc} {PASTMY}", "hernia repair",
         "{eponym_proc} in {PASTYEAR}")
SOCIAL = _compile_all(
    "Lives with {his} {relation} {REL} in {CITY}, {STATE}.",
    "Works as a {PROF} at {ORG}.",
    "Retired {PROF}.",
    "Emigrated from {ORIGIN} in {PASTYEAR}.",
    "Former smoker, 30 pack-years, quit in {PASTYEAR}.",
    "Drinks 2 beers daily, denies illicit drug use.",
    "Never smoker. No alcohol.",
    "Lives alone in an apartment on {STREET}.",
    "{He} is a {OTHER}.",
    "Independent in ADLs, walks with a cane.",
    "Resides at {ORG} assisted living.",
    "Involved in an MVC on {PASTDATE}; vehicle plate {VEH}.",
    "Enjoys trips to {LOCOTHER} with {his} {relation}.",
    "Insurance through {INSURER}, member ID {HP}.",
)
FAMILY = _compile_all(
    "Mother with {comorb}; father died of MI at age {AGEN}.",
    "Noncontributory.",
    "Sister with {eponym}.",
    "Brother with colon cancer diagnosed at {AGEN}.",
    "No family history of {eponym}.",
    "Father with {comorb}, mother alive and well at {AGEN}.",
)
COURSE = _compile_all(
    "# {dxprob}: {He} was treated with {medline} with improvement. {result_c}. {plan_c}.",
    "# {comorb}: home medications were continued.",
    "On hospital day {n}, {he} developed {cc} and was evaluated by {DR} of {DEPT}.",
    "{He} was seen by {DR} ({DEPT}) who recommended {plan_c}.",
    "Case discussed with {DR} on {DATE_IN}.",
    "{He} underwent {proc} on {DATE_IN}, which showed {result_c}.",
    "Patient was transferred to the {DEPT} on {DATE_IN} and returned to the floor the next day.",
    "# {eponym}: stable, no changes to regimen.",
    "{labval} on admission, trended to {labval} by discharge.",
    "{He} was evaluated by PT/OT who recommended {dispo_plain}.",
    "Foley catheter was removed on {WEEKDAY} and {he} voided without difficulty.",
    "Goals of care discussed with {his} {relation} {REL} at the bedside.",
    "A Holter monitor was placed on {DATE_IN} and showed paroxysmal atrial fibrillation.",
    "A Swan-Ganz catheter was placed in the {DEPT} and removed after 48 hours.",
    "{He} remained hemodynamically stable throughout the admission.",
    "Repeat {labval} on {DATE_IN}; {plan_c}.",
    "{His} home {medname} was held on admission and restarted on {WEEKDAY}.",
    "Social work met with {him} and {his} {relation} regarding discharge planning.",
    "By the day of discharge {he} was ambulating independently and tolerating a regular diet.",
    "# {dxprob}: {result_c}. Seen by {DR}; {plan_c}.",
)
PN_SUBJ = _compile_all(
    "No acute events overnight.", "{He} c/o {cc}.", "{He} reports feeling better today.",
    "{He} slept poorly, {cc} overnight.", "Tolerating diet. Ambulating with PT.",
    "Spoke with {his} {relation} {REL} by phone ({PHONE}).", "Denies {cc}.",
    "{He} asked about going home by {WEEKDAY}.", "Pain controlled on {medname}.",
    "Overnight {he} required {medline}.", "Feels weak, appetite poor.", "No complaints this AM.",
    "Per nursing, {he} was agitated overnight and received {medname}.",
)
PN_AP = _compile_all(
    "# {dxprob} - {plan_c}.", "# {dxprob} - continue {medline}.", "# {comorb} - stable, continue home meds.",
    "# {dxprob} - {result_c}; {plan_c}.", "# FEN - regular diet, replete lytes prn.",
    "# PPx - heparin SC, PPI.", "# Code status - full code, confirmed with {REL} ({relation}).",
    "# Dispo - anticipate discharge to {dispo_plain} in {n} days.",
    "# {eponym} - followed by {DR}, no acute issues.",
    "Discussed with {DR}, attending of record.",
    "# {dxprob} - {result_c}. Will discuss with {DR}.", "# {comorb} - hold {medname}, recheck {labval}.",
    "# Access - PIV x2.", "Patient seen and examined with {DR}; agree with plan above.",
)
NURSE = _compile_all(
    "{obs}.", "{obs}.", "{obs}.", "{obs}, {obs}.", "Pt {PTLAST} in room {ROOM}, {obs}.",
    "{relation} {REL} called, updated on plan of care. Contact {PHONE}.",
    "{DR} notified of {labval}, new orders received.", "Meds given as ordered: {medline}.",
    "VS: {vit}.", "{He} was transferred to {ROOM} at 14:30.", "Will continue to monitor.",
    "Pt states {he} wants to go home to {CITY}.", "Safety: bed alarm on, {obs}.",
    "Wound care to sacrum per protocol, Foley catheter care done.", "Chaplain visit requested by {relation} {REL}.",
    "Glucometer device {DEV} used for POC glucose: {glu}.",
    "Report received from night RN {RN}.", "Assisted to bathroom x2, steady gait.",
    "Pt educated on {medname}, verbalized understanding.", "{obs}. Will report to oncoming shift.",
    "BS {glu}, no coverage needed.", "Telemetry: sinus rhythm 70s-80s.",
)
FOLLOWUP = _compile_all(
    "Follow up with {DR} in {DEPT} on {FUTDATE} at 10:30 am.",
    "Follow up with PCP {PCP} in 1-2 weeks; office phone {DRPHONE}.",
    "Call {PHONE} with any questions.",
    "Please fax this summary to {PCP} at {FAX}.",
    "Appointment at {OHOSP} {DEPT} clinic on {FUTDATE}.",
    "Return to ED for worsening {cc}.",
    "Labs (BMP) in 1 week, results to {PCP}.",
)
CONTACT = _compile_all(
    "Patient portal: {URL}",
    "Patient e-mail on file: {EMAIL}",
    "Patient can be reached at {PHONE} or {EMAIL}.",
    "Results faxed to {FAX}.",
    "Note accessed by {DRUSER} from workstation {IP}.",
    "Education material sent via {URL}.",
    "Pager {DRPHONE}; email {DREMAIL}.",
    "Portal username {USER}.",
)
ALLERGIES = ["NKDA", "No known drug allergies", "penicillin (rash)", "sulfa (hives)", "codeine - nausea",
             "iodinated contrast (anaphylaxis)", "latex", "NKDA."]
EXAM_LINES = [
    ("Gen", ["NAD, pleasant", "ill-appearing, diaphoretic", "elderly, in mild distress", "alert, conversant"]),
    ("HEENT", ["PERRL, EOMI, MMM", "anicteric sclerae, dry mucous membranes", "OP clear"]),
    ("CV", ["RRR, no m/r/g", "irregularly irregular", "RRR, 2/6 SEM at RUSB", "tachycardic, regular"]),
    ("Lungs", ["CTAB", "crackles at bases bilaterally", "diffuse wheezes", "decreased BS on the right"]),
    ("Abd", ["soft, NT/ND, +BS", "mildly distended, nontender", "obese, soft, no HSM",
             "RUQ tenderness, Murphy's sign negative", "Murphy's sign positive"]),
    ("Ext", ["no c/c/e", "1+ pitting edema to the knees", "warm, well perfused, 2+ DP pulses"]),
    ("Neuro", ["A&O x3, CN II-XII intact", "strength 5/5 throughout", "A&O x2, 4/5 strength LLE",
               "no focal deficits", "Glasgow Coma Scale 15", "GCS 14, Babinski sign absent bilaterally",
               "Babinski sign upgoing on the right"]),
]
DISPO = ["home", "home with VNA services", "skilled nursing facility", "acute rehab", "home with hospice",
         "long-term acute care"]
HOLIDAYS_EN = ["Christmas", "Thanksgiving", "New Year's Eve", "Easter", "the Fourth of July", "Labor Day"]
HOLIDAYS_FR = ["Noël", "Pâques", "le 14 juillet", "la Toussaint", "le Nouvel An"]
