"""Vocabulary of ICU nursing notes: systems, telegraphic findings, devices, drips.

Real ICU nursing notes (the PhysioNet deid "nursing notes" are the example a user meets)
are written system by system in a telegraphic register: ``NEURO: A&O X3, MAE. CV: SR 80S,
NO ECTOPY. BP 110-140/50-60 ...`` — in upper case, lower case or mixed, with vital-sign
ranges, drip rates, times, lab runs and misspellings, and with very little PHI (about 4 %
of sentences). Without such notes in the synthetic corpus, a model trained on it flagged
nearly every token of a real note.

**Where the words come from.** Every phrase below was written for this package from
general clinical nursing knowledge (standard ICU abbreviations, generic and brand drug
names, device names, units of measure), in the form any nursing textbook or public drug
list uses. No text of any PHI corpus was copied, read into, or derived from, and nothing
here is drawn from the PhysioNet deid package's own word lists (its ``dict/`` and
``lists/`` folders are deliberately not used: they were built around that corpus). The
*statistics* a generator should match (share of upper-case notes, PHI per sentence,
which PHI types occur) were measured on the nursing notes' training split as counts only
and notebook ``00_corpus_overview`` shows them.

Placeholders: ``{SLOT}`` upper case writes PHI (see :mod:`deidlib.synthetic.notes.icu`),
``{slot}`` lower case writes non-PHI values (vital ranges, doses, times, lab values).

Hard negatives — tokens that look like names or identifiers but are not PHI — are mixed
in on purpose: brand names of drugs and devices (``Lasix``, ``Foley``, ``Swan``,
``Dobhoff``, ``Quinton``), eponyms (``Trendelenburg``), abbreviations that look like
initials (``MAE``, ``PERRL``, ``CDI``, ``RIJ``), units and times.
"""

from __future__ import annotations

__all__ = []

SYSTEMS: tuple[str, ...] = ("neuro", "cv", "resp", "gi", "gu", "id", "endo", "heme", "skin", "lines", "pain",
                            "activity", "social")

#: header spellings per system (the separator is chosen per note)
SYSTEM_HEADERS: dict[str, tuple[str, ...]] = {
    "neuro": ("NEURO", "Neuro", "N", "NEURO/PSYCH", "MS", "Neuro status"),
    "cv": ("CV", "C/V", "CARDIAC", "Cardiac", "CVS", "HEMODYNAMICS"),
    "resp": ("RESP", "Resp", "PULM", "Pulm", "RESPIRATORY", "R"),
    "gi": ("GI", "G.I.", "GI/NUTRITION", "ABD"),
    "gu": ("GU", "G.U.", "RENAL", "GU/RENAL"),
    "id": ("ID", "I.D.", "INFECTIOUS DISEASE", "Temp"),
    "endo": ("ENDO", "Endo", "ENDOCRINE", "GLUCOSE"),
    "heme": ("HEME", "Heme", "HEMATOLOGY", "COAGS"),
    "skin": ("SKIN", "Skin", "INTEG", "SKIN/WOUND", "WOUND"),
    "lines": ("LINES", "Lines", "ACCESS", "IV ACCESS"),
    "pain": ("PAIN", "Pain", "COMFORT"),
    "activity": ("ACTIVITY", "Activity", "MOBILITY", "SAFETY"),
    "social": ("SOCIAL", "Social", "COPING", "FAMILY", "SOCIAL/FAMILY", "PSYCHOSOCIAL", "DISPO"),
}

#: telegraphic findings per system; ``{x}`` fill non-PHI values
SYSTEM_PHRASES: dict[str, tuple[str, ...]] = {
    "neuro": (
        "A&O X3", "A&OX{n3}", "AOX{n3}", "alert and oriented x{n3}", "MAE", "MAE to command", "PERRL", "PERRLA {pupil}",
        "follows commands", "does not follow commands", "sedated on {sedation}", "lethargic but arousable to voice",
        "opens eyes to voice", "agitated overnight, {prn_med} given with effect", "oriented to self only",
        "pleasant and cooperative", "confused at times, reorients easily", "GCS {gcs}", "no seizure activity noted",
        "moves all extremities weakly", "pupils {pupil}, brisk", "c/o headache, {prn_med} given",
        "restless, pulling at lines, soft restraints on", "calm, sleeping in naps", "denies numbness or tingling",
        "speech clear", "slurred speech unchanged", "neuro checks q{n_q}h unchanged", "RASS {rass}",
        "withdraws to painful stimuli", "grips equal bilat", "CIWA {ciwa}",
    ),
    "cv": (
        "{rhythm} {hr_range}", "HR {hr_range} {rhythm}", "no ectopy", "occ PVC's", "rare PAC's", "{bp}",
        "SBP {sbp_range}", "MAP > {map_}", "MAPs {map_}-{map2}", "BP stable", "hypotensive to {sbp}/{dbp}, {bolus}",
        "{drip}", "weaned off {pressor}", "{pressor} titrated to keep MAP > {map_}", "CVP {cvp}-{cvp2}",
        "PA {pa}", "CO/CI {co}/{ci}", "pulses palpable all extremities", "+dopplerable pedal pulses",
        "{edema} edema", "K {k}, repleted with {kcl}", "Mg {mg}, {mgso4} given", "CK {ck}, trop {trop}",
        "pacing wires to {pacer}", "IABP {iabp}", "denies CP", "c/o chest pressure, ECG done, no changes",
        "S1S2 heard", "hct {hct}", "IVF D5 1/2NS @ {rate_cc}cc/hr", "2/6 SEM", "1/2NS @ {rate_cc}", "{beta} {bb_dose} IV given for HR", "tele {rhythm}",
        "NBP {bp_range}", "ABP {bp_range}", "BP {bp_range} on {pressor}", "PAP {pa}-{pa}", "{murmur}/6 SEM", "HO aware of BP",
        "BP to {sbp}'s, HO notified", "HR {hr_range} at {time}", "BP {sbp}'s-{sbp2}'s", "HO made aware", "team aware",
        "high risk for arrhythmia", "may need more fluid", "per careview", "NS {frac} at {rate_cc}cc/hr", "K {k} at {time}",
    ),
    "resp": (
        "{o2}", "sats {sat_range}% on {o2_short}", "O2 sat {sat}%", "LS {ls}", "lungs {ls}",
        "RR {rr_range}", "{vent}", "vent settings {vent}", "ABG {abg}", "suctioned for {secretions}",
        "strong cough, {secretions}", "weak cough", "CXR done", "CXR {cxr}", "extubated to {o2_short} at {time}",
        "intubated {time} for resp distress", "#{ett} ETT {ett_cm} at lip", "IS x{n10} q1h", "nebs q4h and prn",
        "albuterol nebs given", "diminished at bases", "on trach mask {fio2}%", "CPAP {peep} overnight",
        "RSBI {rsbi}", "SBT {sbt}", "no distress", "DOE with activity", "face tent {fio2}%",
        "ABG {abg5}", "last ABG {abg5}", "ABG at {time} {abg5}", "{mode} {vent_num}/{vent_vt}/.{fio2}/{peep_n}", "PSV{ps}/{peep_n}",
        "remains on PSV {ps}/{peep_n} with stable gases", "ABG on {vent} = {abg}", "pm ABG: {abg5}", "ABG from weans in flowsheets",
        "vented {mode} {vent_vt}x{vent_num}, {peep_n} PEEP, {fio2}%", "desatted to high 80's", "Nasal Cannula {n10} lpm",
        "on masked ventilation", "RT aware", "may need reintubation", "high risk for aspiration", "CXR at {time}",
    ),
    "gi": (
        "abd soft, NT/ND", "abd soft, distended, +BS", "+BS x4", "hypoactive BS", "tolerating {diet}",
        "NPO", "NPO after MN for {procedure}", "TF {tube_feed} @ {rate_cc}cc/hr via {tube}", "residuals {resid}cc",
        "{tube} to LIWS, {drainage} drainage", "no BM", "BM x{n3}, {stool}", "c/o nausea, {antiemetic} given",
        "no N/V", "appetite poor", "taking po's well", "swallow eval {swallow}", "protonix IV", "colace/senna given",
        "LFT's {lft}", "amylase {amyl}", "guaiac neg", "ostomy {ostomy}",
        "TF restarted at {time}", "TF held at {time} for procedure", "tube feeds on hold since {time}", "1/2 strength TF",
        "{tube_feed} at {rate_cc}cc/hr through PEG", "may advance diet in am", "high residuals, TF held",
    ),
    "gu": (
        "foley to CD draining {urine} urine", "UO {uo_range}cc/hr", "u/o {uo_range}cc/hr", "u/o adequate",
        "lasix {lasix} IV with good response", "BUN/Cr {bun}/{cr}", "cr {cr}", "voiding qs", "voiding via urinal",
        "I/O {io_in}/{io_out}", "net {net} for the day", "CVVH running, {cvvh}", "HD today, {hd} removed",
        "foley d/c'd at {time}, DTV by {time2}", "straight cath for {uo}cc", "UA/UC sent", "bladder scan {scan}cc",
        "+{io_in} LOS {net} since MN", "lytes at {time}", "serial CPK at {time}, {time2}", "labs pending from {time}",
        "am labs at {time}", "u/o {uo}cc since {time}",
    ),
    "id": (
        "afebrile", "Tmax {temp}", "T {temp} PO", "febrile {temp}, cultures sent", "pan cultured",
        "WBC {wbc}", "on {abx}", "{abx} and {abx2} IV", "awaiting culture results", "cultures neg to date",
        "contact precautions for {organism}", "tylenol {tylenol} for temp", "cooling blanket on", "sputum cx sent",
        "T max {temp}-{temp}", "Bair Hugger on", "started on {abx2} and {abx}", "{abx} level at {time}",
    ),
    "endo": (
        "BS {bs}", "FS {bs}, covered per RISS", "insulin gtt @ {insulin}u/hr", "FS q{n_q}h", "BS {bs}-{bs2}",
        "{insulin}u regular insulin sc per sliding scale", "NPH {insulin}u given", "TSH pending", "BG {bs}",
    ),
    "heme": (
        "hct {hct}", "hct stable {hct}", "{prbc} units PRBC given", "plt {plt}", "INR {inr}", "PTT {ptt}",
        "heparin gtt @ {heparin}u/hr", "PTT {ptt} on heparin, rate ^ per protocol", "coumadin {coumadin}mg po",
        "FFP x{n3}", "vit K {vitk}mg sc", "no s/s bleeding", "oozing at {site}, dsg reinforced", "type and cross sent",
        "plt {plt},000", "hct {hct} at {time}, recheck at {time2}", "1 unit PRBC by {time}",
    ),
    "skin": (
        "intact", "warm and dry", "dsg C/D/I", "dsg's CDI", "sternal incision {incision}", "coccyx {coccyx}",
        "duoderm to coccyx", "{site} site without hematoma", "groin site soft, no ooze", "turned q2h", "air mattress",
        "pink, warm", "mottled lower extremities", "stage {stage} decub to sacrum, {wound_care}", "rash to {body}",
        "Tegaderm to {line} site", "JP drain {jp}cc serosang", "pressure areas checked, no redness",
    ),
    "lines": (
        "{line} {side_site}", "PIV x{n3}", "{line} placed {time}", "a-line {side_site} dampened, flushed",
        "TLC {side_site}", "PICC {side_site}", "Swan {side_site}, wedge {pcwp}", "Quinton cath {side_site}",
        "Hickman {side_site} patent", "Dobhoff placed, placement by KUB", "Pleurevac to {suction}cm sx, no air leak",
        "chest tubes {ct} serosang", "{line} d/c'd, tip sent",
    ),
    "pain": (
        "c/o pain {pain}/10, {analgesic} given with relief", "denies pain", "pain controlled on {analgesic}",
        "{analgesic} PCA", "pain {pain}/10 --> {pain}/10 after med", "{analgesic} x{n3} for incisional pain", "pain {pain}/10 at rest", "grimaces with turning",
    ),
    "activity": (
        "OOB to chair", "OOB to chair x{n3} hrs", "bedrest", "bedrest until {time}", "turns self in bed",
        "dangled at bedside", "ambulated {feet} ft with PT", "PT/OT to see", "fall precautions", "bed alarm on",
        "will stand up ocassionally with assist", "OOB at {time}", "may be limited d/t resp status", "high fall risk",
        "soft restraints for safety", "HOB > 30", "up to commode with assist x{n3}",
    ),
    "social": (
        "family in to visit", "family updated", "{relation} in most of day", "{relation} called, updated on condition",
        "pt is full code", "DNR/DNI", "code status discussed with family", "SW consult placed", "case mgmt following",
        "pt emotionally labile", "coping well", "anxious about procedure", "supportive family at bedside",
        "pt's {relation} will call in am", "health care proxy is {relation}",
        "{relation} and {relation2} in to visit", "{relation}s called", "translated by {relation}", "{relation} upset about prognosis",
        "family meeting at {time}", "{relation} aware and agree with plan",
    ),
}

#: PHI-bearing phrases per system (rare: a note gets a few). PHI slots:
#: ``DRL`` (a doctor's surname, optionally after Dr/DR/dr), ``INI`` (an initial and a care
#: provider's surname, "M. Zarnowsky"), ``NPF`` (a nurse / NP / RT first name), ``RELF`` /
#: ``RELL`` (a relative's first / last name), ``PTL`` / ``PTF`` (the patient's surname /
#: first name), ``MD`` (a
#: month/day date), ``YY`` (a year), ``HOSPS`` (a short hospital name), ``WARD`` (a unit
#: or building name), ``CITY``, ``PHONE``, ``PAGER``, ``AGE`` (an age over 89).
PHI_PHRASES: dict[str, tuple[str, ...]] = {
    "neuro": ("neuro consult, seen by dr {DRL}", "head CT {MD} neg", "{DRL} aware of change in mental status"),
    "cv": ("{DRL} aware", "per dr {DRL}", "cath at {HOSPS} {MD}", "CABG '{YY} at {HOSPS}", "dr {DRL} and dr {DRL} in to see pt", "dr {DRL} notified of {sbp}/{dbp}", "cath {MD}, stent to {vessel}",
           "{pressor} started per {DRL}", "echo {MD}: EF {ef}%", "NP {NPF} aware, no new orders",
           "NP {DRL} made aware", "{INI} in to see pt", "dr {INI} aware", "s/p {procedure} {MD}", "{MD}-> {procedure}",
           "sent to {HOSPS} via ambulance", "taken to {HOSPS} where trop pos", "MI '{YY}", "cath {MD} at {HOSPS}"),
    "resp": ("extubated {MD}", "trach {MD} by dr {DRL}", "intubated at {HOSPS} {MD}", "RT {NPF} in, suctioned", "seen by pulm, dr {DRL}", "CXR {MD} {cxr}",
             "bronch {MD} per dr {DRL}", "{INI} RRT in to suction", "plan to wean for extubation {MD}",
             "intubated {MD} at {HOSPS}, transferred here"),
    "gi": ("last BM {MD}", "PEG placed at {HOSPS} {MD}", "seen by GI, dr {DRL}", "NPO for EGD with dr {DRL} tomorrow", "adm to the {HOSPS} for GI bleed {MD}"),
    "gu": ("renal following, dr {DRL}", "HD {MD}", "urology, dr {DRL}, to see", "HD {MD} or {MD}", "WT {MD} {wt}kg"),
    "id": ("cultures {MD} neg", "ID consult, dr {DRL}", "urine cx from {MD} NGTD", "blood cultures {MD} (+) for GPC"),
    "endo": ("endocrine, dr {DRL} following",),
    "heme": ("{prbc} units PRBC {MD}", "coumadin held per dr {DRL}"),
    "skin": ("wound care RN {NPF} in to see pt", "wound nurse, {NPF} {DRL}, notified"),
    "lines": ("{line} placed {MD}", "{line} placed by dr {DRL}", "PICC placed {MD}"),
    "pain": ("pain service, dr {DRL}, following", "dr {DRL} has seen pt"),
    "activity": ("PT {NPF} in, ambulated {feet} ft",),
    "social": (
        "{relation} {RELF} in to visit", "{relation} {RELF} called, updated", "{relation}, {RELF}, phoned, updated",
        "{relation} {RELF} can be reached at {PHONE}", "pt lives in {CITY} with {relation}",
        "family from {CITY} here", "{relation} ({RELF}) is HCP", "{relation} {RELF} and {relation2} in this pm",
        "pt lives alone in {CITY}", "pt works for {HOSPS}", "{relation} {RELF} {PTL} in to visit",
        "Mr/Mrs {PTL} updated by phone", "Mr. {PTL} anxious, reassured", "{PTF} tearful, emotional support given",
        "Mrs. {PTL}'s {relation} in", "{PTF} asking for {relation}", "spoke with {relation} {RELF}, questions answered",
        "{relations}s {RELF} and {RELF} in, updated by dr {DRL}", "{relation} {RELF} {PTL} ({PHONE}) is contact person",
        "family meeting with dr {DRL} and {relation} {RELF}", "pt's {relation} {RELF} from {CITY} visiting",
        "{relation} is a nurse at {HOSPS}", "{RELF} ({relation}) called x2",
        "keep {PTL} family aware of plan of care", "Mr. {PTL} resting comfortably", "Mrs. {PTL} tearful at times",
        "{PTF} slept well after {time}", "{relation}, {RELF} {RELL} of {CITY}, visited", "{relation} in {CITY}, updated by phone",
        "hospice co.- {HOSPS} to see pt in am", "{relation} {RELF} ({PHONE}) aware", "pt from the {HOSPS} house",
    ),
}

#: opening lines (history) of some notes
OPENINGS: tuple[str, ...] = (
    "{AGE} yo {sex} admitted {MD} with {event}.",
    "{AGE} y/o {sex} transferred from {HOSPS} {MD} for {event}.",
    "pt is a {AGE} yo {sex} followed at {HOSPS} by dr {DRL}, admitted with {event}.",
    "{AGE} YO {sex} S/P {procedure} {MD}.",
    "{AGE}yo {sex} with h/o {pmh}, {pmh2} admitted with {event}.",
    "Pt admitted {MD} from {HOSPS} ER with {event}.",
    "{AGE} yo {sex} POD #{n3} s/p {procedure}.",
    "pt transferred from {HOSPS} for further eval of {event}.",
    "{AGE} yo {sex} w/ PMH {pmh}, {pmh2}, {pmh3}, admitted with {event}.",
    "S: pt c/o {event}.",
    "Pt with {event}, MI '{YY}, CABG {YY}.",
    "pt went to {HOSPS} ER {MD} with {event}, transferred here for cath.",
    "{MD} {procedure}. {MD} {event}, {pressor} started.",
    "Pt is a {AGE} yo {sex} from {CITY}, seen at {HOSPS} with {event}.",
    "received pt from {WARD} at {time} on {o2_short}.",
    "{AGE} yo {sex} s/p {procedure}, POD #{n3}.", "pt is a {AGE} yo {sex} with h/o {pmh} and {pmh2}, here with {event}.",
    "{AGE} y/o {sex} admitted from ED with {event}.", "pt remains intubated, sedated, with {event}.",
    "pt is a {AGE} yr old {sex} with {event}, on {pressor}.", "S: \"{complaint}\"",
    "{AGE} yo {sex} admitted to {WARD} w/ {event} {MD}.",
    "pt recently adm to the {HOSPS} for {event}, transferred here {MD}.",
    "{AGE} YO {sex} TRANSFERRED TO {HOSPS} FOR FURTHER MANAGEMENT OF {event}.",
    "pt with PMH {pmh}, {event} in '{YY} and {YY}.",
    "Pt presented to {HOSPS} on {MD} with {event}.",
    "pt arrived from {HOSPS} via amb at {time}.",
)
#: note titles (most notes have none)
TITLES: tuple[str, ...] = (
    "NPN 7P-7A", "NPN 7a-7p", "7a-7p", "7p-7a:", "0700-1900", "1900-0700", "NPN 3-11", "nsg 11-7", "Nursing Progress Note", "NURSING ADMIT NOTE", "CCU NSG PROGRESS NOTE",
    "MICU nursing note", "CSRU RN Note", "NSG NOTE 0700-1900", "nursing note 1900-0700", "Nursing Transfer Note",
    "SICU NPN", "RN NOTE:",
)
#: assessment lines
ASSESSMENT: tuple[str, ...] = (
    "hemodynamically stable", "stable, improving", "no acute events", "resp status improving",
    "{event}, stable on current regimen", "remains on {pressor}", "tolerating wean", "slow progress", "critical but stable",
    "labile BP", "improving renal fx", "failed SBT", "stable post procedure",
)
PLAN: tuple[str, ...] = (
    "cont to monitor", "monitor hemodynamics", "wean {pressor} as tol", "wean vent as tol", "SBT in am",
    "follow labs", "cont current plan", "transfer to floor when bed available", "PT/OT", "pulm toilet",
    "monitor u/o", "check K in am", "support family", "diurese as tol", "advance diet as tol", "am labs",
    "cont heparin, f/u PTT", "possible extubation in am", "cath lab in am", "keep NPO after MN",
    "transfer to floor when bed avail", "may transfer out today", "keep family aware of plan of care", "wean O2 as tol",
    "f/u ABG at {time}", "lytes at {time}", "recheck hct at {time}", "CXR in am", "high risk for skin breakdown, turn q2h",
)
#: plan items that name a place or a person (drawn at the note's PHI rate, unlike :data:`PLAN`)
PLAN_PHI: tuple[str, ...] = (
    "transfer to {WARD} when bed available", "? transfer to {WARD} in am", "d/c to {HOSPS} rehab when stable",
    "{WARD} when bed avail", "transfer to {HOSPS} when bed available", "screened by {HOSPS} rehab", "may transfer to {WARD} today",
    "keep {PTL} family aware of plan", "update {relation} {RELF} in am",
)
DRIPS: tuple[tuple[str, str], ...] = (
    ("neo", "{dose_mcg}mcg/kg/min"), ("levophed", "{dose_mcg}mcg/kg/min"), ("dopamine", "{dose_dop}mcg/kg/min"),
    ("dobutamine", "{dose_dop}mcg/kg/min"), ("propofol", "{dose_prop}mcg/kg/min"), ("fentanyl", "{dose_fent}mcg/hr"),
    ("versed", "{dose_small}mg/hr"), ("heparin", "{heparin}u/hr"), ("insulin", "{insulin}u/hr"),
    ("nitro", "{dose_ntg}mcg/min"), ("NTG", "{dose_ntg}mcg/min"), ("amiodarone", "{dose_small}mg/min"),
    ("nipride", "{dose_mcg}mcg/kg/min"), ("precedex", "{dose_mcg}mcg/kg/hr"), ("lasix", "{dose_small}mg/hr"),
    ("diltiazem", "{dose_small}mg/hr"), ("esmolol", "{dose_esm}mcg/kg/min"), ("vasopressin", "0.04u/min"),
)
PRN_MEDS: tuple[str, ...] = ("ativan 1mg", "haldol 2mg IV", "morphine 2mg IV", "MSO4 2mg", "dilaudid 0.5mg",
                             "percocet 1 tab", "tylenol 650mg", "fentanyl 50mcg", "zyprexa 5mg", "ambien 5mg",
                             "benadryl 25mg", "zofran 4mg", "seroquel 25mg", "oxycodone 5mg")
PMH_ITEMS: tuple[str, ...] = ("CAD", "HTN", "IDDM", "NIDDM", "CHF", "COPD", "CRI", "ESRD on HD", "afib", "PVD",
                              "s/p CABG", "hyperlipidemia", "ETOH abuse", "CVA", "DM2", "GERD", "obesity", "OSA",
                              "hypothyroid", "asthma", "PUD", "AAA", "MVR", "AVR", "CHB s/p PPM", "depression")
EVENTS: tuple[str, ...] = ("CP", "chest pain", "SOB", "resp failure", "acute MI", "NSTEMI", "CHF exacerbation",
                           "GI bleed", "UGIB", "sepsis", "urosepsis", "pneumonia", "PNA", "DKA", "ETOH withdrawal",
                           "altered mental status", "syncope", "hypotension", "rapid AF", "SAH", "SDH s/p fall",
                           "pancreatitis", "COPD flare", "unstable angina", "CHB", "VT arrest", "MVA", "overdose")
#: ward / unit words after a building name ("<name> 4", "<name> 9 ICU")
UNIT_WORDS: tuple[str, ...] = ("", "", "", " ICU", " CCU", " step down", " tele", " rehab")
