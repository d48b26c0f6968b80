"""Medical vocabularies of the synthetic corpus (written for deidlib; no external source).

Everything here is *non-PHI* content: problems, medications with doses, labs with
plausible ranges, procedures, findings, eponyms, and the cancer-registry topography
(primary site / subsite, after ICD-O-3 topography codes) used by pathology reports.

Diagnosis classes (the ``diagnosis`` metadata label, 7 classes) each own a vocabulary;
notes mix in comorbidities drawn from the *other* classes so that the label is not a
keyword lookup (the downstream-utility and registry studies need a task that is
learnable but not trivial).
"""

from __future__ import annotations

__all__ = []

# A medication: (name, doses, route, frequencies)
_M = tuple

DIAGNOSES: dict[str, dict] = {
    "heart_failure": {
        "label": "heart failure",
        "problem": ["congestive heart failure", "acute on chronic systolic heart failure",
                    "decompensated heart failure", "CHF exacerbation", "heart failure with reduced ejection fraction",
                    "diastolic heart failure"],
        "complaint": ["shortness of breath", "dyspnea on exertion", "orthopnea", "bilateral leg swelling",
                      "weight gain of 8 lbs", "paroxysmal nocturnal dyspnea", "fatigue and edema"],
        "finding": ["JVD to the angle of the jaw", "bibasilar crackles", "2+ pitting edema bilaterally",
                    "S3 gallop", "a 2/6 holosystolic murmur at the apex", "cardiomegaly on chest film",
                    "pulmonary vascular congestion", "small bilateral pleural effusions"],
        "meds": [_M(("furosemide", ("20 mg", "40 mg", "80 mg"), "PO", ("daily", "BID"))),
                 _M(("metoprolol succinate", ("25 mg", "50 mg", "100 mg"), "PO", ("daily",))),
                 _M(("lisinopril", ("5 mg", "10 mg", "20 mg"), "PO", ("daily",))),
                 _M(("spironolactone", ("12.5 mg", "25 mg"), "PO", ("daily",))),
                 _M(("carvedilol", ("3.125 mg", "6.25 mg", "12.5 mg"), "PO", ("BID",))),
                 _M(("sacubitril-valsartan", ("24-26 mg", "49-51 mg"), "PO", ("BID",)))],
        "labs": ["BNP", "Cr", "K", "Na"],
        "procedure": ["transthoracic echocardiogram", "right heart catheterization", "diuresis with IV Lasix",
                      "cardiac catheterization", "ICD placement"],
        "result": ["EF 25-30% with global hypokinesis", "EF of 35%", "moderate mitral regurgitation",
                   "LVEF 40%, grade II diastolic dysfunction", "dilated left ventricle"],
        "plan": ["continue diuresis, goal net negative 1-2 L/day", "daily weights, 2 g sodium diet, fluid restriction 1.5 L",
                 "uptitrate beta blocker as tolerated", "follow up in heart failure clinic", "repeat echo in 3 months"],
    },
    "pneumonia": {
        "label": "pneumonia",
        "problem": ["community-acquired pneumonia", "right lower lobe pneumonia", "aspiration pneumonia",
                    "healthcare-associated pneumonia", "left lower lobe infiltrate", "multifocal pneumonia"],
        "complaint": ["fever and productive cough", "cough with rusty sputum", "pleuritic chest pain",
                      "chills and rigors", "worsening cough for 5 days", "fevers to 102.4"],
        "finding": ["rhonchi at the right base", "dullness to percussion at the left base", "egophony",
                    "decreased breath sounds at the RLL", "RLL consolidation on CXR", "tachypnea to 28"],
        "meds": [_M(("ceftriaxone", ("1 g", "2 g"), "IV", ("daily", "q24h"))),
                 _M(("azithromycin", ("250 mg", "500 mg"), "PO", ("daily",))),
                 _M(("levofloxacin", ("500 mg", "750 mg"), "PO", ("daily",))),
                 _M(("piperacillin-tazobactam", ("3.375 g", "4.5 g"), "IV", ("q6h", "q8h"))),
                 _M(("vancomycin", ("1 g", "1.25 g", "15 mg/kg"), "IV", ("q12h",))),
                 _M(("guaifenesin", ("600 mg",), "PO", ("BID",)))],
        "labs": ["WBC", "lactate", "procalcitonin", "Cr"],
        "procedure": ["chest x-ray", "blood cultures x2", "sputum culture", "CT chest with contrast",
                      "thoracentesis"],
        "result": ["blood cultures no growth to date", "sputum with gram positive diplococci",
                   "urine legionella antigen negative", "CXR with RLL consolidation"],
        "plan": ["complete 7 day course of antibiotics", "incentive spirometry", "wean O2 to room air",
                 "repeat CXR in 6 weeks", "pneumococcal vaccine prior to discharge"],
    },
    "copd": {
        "label": "COPD",
        "problem": ["COPD exacerbation", "chronic obstructive pulmonary disease", "acute exacerbation of COPD",
                    "emphysema", "chronic bronchitis with hypercapnia"],
        "complaint": ["increased dyspnea and wheezing", "increased sputum production", "chest tightness",
                      "inability to complete sentences", "worsening shortness of breath"],
        "finding": ["diffuse expiratory wheezes", "prolonged expiratory phase", "use of accessory muscles",
                    "barrel chest", "hyperinflation on CXR", "pursed lip breathing"],
        "meds": [_M(("albuterol nebulizer", ("2.5 mg",), "INH", ("q4h prn", "q6h"))),
                 _M(("ipratropium", ("0.5 mg",), "INH", ("q6h",))),
                 _M(("prednisone", ("40 mg", "60 mg"), "PO", ("daily",))),
                 _M(("tiotropium", ("18 mcg",), "INH", ("daily",))),
                 _M(("fluticasone-salmeterol", ("250/50 mcg", "500/50 mcg"), "INH", ("BID",))),
                 _M(("doxycycline", ("100 mg",), "PO", ("BID",)))],
        "labs": ["pCO2", "pH", "HCO3", "WBC"],
        "procedure": ["pulmonary function tests", "ABG", "BiPAP trial", "chest x-ray", "6 minute walk test"],
        "result": ["FEV1 38% predicted", "FEV1/FVC 0.52", "ABG 7.31/58/64", "no infiltrate on CXR"],
        "plan": ["steroid taper over 5 days", "smoking cessation counseling", "pulmonary rehab referral",
                 "home O2 2 L NC with exertion", "follow up with pulmonology"],
    },
    "diabetes": {
        "label": "diabetes",
        "problem": ["diabetic ketoacidosis", "uncontrolled type 2 diabetes mellitus", "hyperosmolar hyperglycemic state",
                    "type 1 diabetes mellitus", "hypoglycemia", "diabetic foot ulcer"],
        "complaint": ["polyuria and polydipsia", "nausea and vomiting", "blurred vision", "confusion",
                      "a non-healing ulcer on the left foot", "abdominal pain"],
        "finding": ["dry mucous membranes", "Kussmaul respirations", "fruity breath", "decreased sensation to monofilament",
                    "1 cm ulcer over the left first metatarsal head", "anion gap of 24"],
        "meds": [_M(("insulin glargine", ("10 units", "20 units", "34 units"), "SC", ("qHS", "daily"))),
                 _M(("insulin lispro", ("4 units", "6 units", "sliding scale"), "SC", ("TID with meals",))),
                 _M(("metformin", ("500 mg", "1000 mg"), "PO", ("BID",))),
                 _M(("empagliflozin", ("10 mg", "25 mg"), "PO", ("daily",))),
                 _M(("glipizide", ("5 mg", "10 mg"), "PO", ("daily",))),
                 _M(("insulin drip", ("0.1 units/kg/hr",), "IV", ("continuous",)))],
        "labs": ["glucose", "HbA1c", "AG", "bicarb"],
        "procedure": ["insulin drip per DKA protocol", "podiatry evaluation", "foot x-ray",
                      "diabetes education", "ophthalmology exam"],
        "result": ["HbA1c 11.2%", "beta-hydroxybutyrate 5.4", "foot x-ray without osteomyelitis",
                   "urine ketones positive"],
        "plan": ["transition to subcutaneous insulin", "carbohydrate consistent diet", "endocrine follow up",
                 "check fingersticks AC and HS", "glucometer teaching"],
    },
    "stroke": {
        "label": "stroke",
        "problem": ["acute ischemic stroke", "left MCA stroke", "transient ischemic attack", "intracerebral hemorrhage",
                    "cardioembolic stroke", "lacunar infarct"],
        "complaint": ["right sided weakness", "slurred speech", "facial droop", "sudden onset aphasia",
                      "left arm numbness", "difficulty walking"],
        "finding": ["right facial droop", "4/5 strength in the right upper extremity", "expressive aphasia",
                    "NIHSS of 8", "left pronator drift", "dysarthria"],
        "meds": [_M(("aspirin", ("81 mg", "325 mg"), "PO", ("daily",))),
                 _M(("clopidogrel", ("75 mg",), "PO", ("daily",))),
                 _M(("atorvastatin", ("40 mg", "80 mg"), "PO", ("qHS",))),
                 _M(("apixaban", ("5 mg", "2.5 mg"), "PO", ("BID",))),
                 _M(("alteplase", ("0.9 mg/kg",), "IV", ("once",))),
                 _M(("labetalol", ("10 mg", "20 mg"), "IV", ("q6h prn",)))],
        "labs": ["LDL", "HbA1c", "INR", "PTT"],
        "procedure": ["CT head without contrast", "MRI brain", "CTA head and neck", "carotid ultrasound",
                      "TEE", "thrombectomy", "speech and swallow evaluation"],
        "result": ["acute infarct in the left MCA territory", "no hemorrhage", "70% stenosis of the left ICA",
                   "no LV thrombus"],
        "plan": ["permissive hypertension for 24 hours", "PT/OT/SLP evaluation", "aspiration precautions",
                 "neuro checks q4h", "stroke clinic follow up"],
    },
    "cancer": {
        "label": "cancer",
        "problem": ["newly diagnosed carcinoma", "metastatic carcinoma", "malignant neoplasm",
                    "neutropenic fever during chemotherapy", "tumor recurrence"],
        "complaint": ["weight loss of 15 lbs", "a palpable mass", "night sweats", "fatigue",
                      "pain at the biopsy site", "nausea after chemotherapy"],
        "finding": ["a firm 2 cm mass", "cachexia", "palpable axillary adenopathy", "hepatomegaly",
                    "port site clean and dry", "mucositis"],
        "meds": [_M(("ondansetron", ("4 mg", "8 mg"), "PO", ("q8h prn",))),
                 _M(("dexamethasone", ("4 mg", "8 mg"), "PO", ("daily",))),
                 _M(("oxycodone", ("5 mg", "10 mg"), "PO", ("q4h prn",))),
                 _M(("filgrastim", ("300 mcg", "480 mcg"), "SC", ("daily",))),
                 _M(("tamoxifen", ("20 mg",), "PO", ("daily",))),
                 _M(("carboplatin", ("AUC 5",), "IV", ("q21 days",)))],
        "labs": ["WBC", "ANC", "Hgb", "Plt"],
        "procedure": ["core needle biopsy", "PET-CT", "port placement", "excisional biopsy",
                      "colonoscopy with biopsy", "bronchoscopy with EBUS"],
        "result": ["FDG avid mass", "no distant metastases", "margins negative", "2 of 14 lymph nodes positive"],
        "plan": ["tumor board review", "medical oncology referral", "staging CT chest/abdomen/pelvis",
                 "discuss adjuvant chemotherapy", "radiation oncology consult"],
    },
    "ckd": {
        "label": "chronic kidney disease",
        "problem": ["acute kidney injury on CKD stage 4", "end stage renal disease", "CKD stage 3b",
                    "hyperkalemia", "volume overload in ESRD", "diabetic nephropathy"],
        "complaint": ["decreased urine output", "generalized weakness", "pruritus", "leg swelling",
                      "missed dialysis", "nausea and poor appetite"],
        "finding": ["uremic fetor", "asterixis", "AV fistula with good thrill and bruit", "anasarca",
                    "peaked T waves on ECG", "1+ edema"],
        "meds": [_M(("sevelamer", ("800 mg", "1600 mg"), "PO", ("TID with meals",))),
                 _M(("calcitriol", ("0.25 mcg", "0.5 mcg"), "PO", ("daily",))),
                 _M(("epoetin alfa", ("4000 units", "10000 units"), "SC", ("weekly",))),
                 _M(("sodium bicarbonate", ("650 mg", "1300 mg"), "PO", ("BID",))),
                 _M(("patiromer", ("8.4 g",), "PO", ("daily",))),
                 _M(("torsemide", ("20 mg", "40 mg"), "PO", ("daily",)))],
        "labs": ["Cr", "BUN", "K", "phos"],
        "procedure": ["hemodialysis", "renal ultrasound", "tunneled dialysis catheter placement",
                      "AV fistula creation", "renal biopsy"],
        "result": ["eGFR 18", "bilateral echogenic kidneys", "UPCR 3.2 g/g", "no hydronephrosis"],
        "plan": ["HD per renal", "renal diet, low potassium", "avoid nephrotoxins", "renally dose medications",
                 "transplant evaluation"],
    },
}
DIAGNOSIS_LABELS: tuple[str, ...] = tuple(DIAGNOSES)

COMMON_MEDS = [
    _M(("acetaminophen", ("500 mg", "650 mg", "1 g"), "PO", ("q6h prn",))),
    _M(("pantoprazole", ("40 mg",), "PO", ("daily",))),
    _M(("heparin", ("5000 units",), "SC", ("q8h", "q12h"))),
    _M(("docusate", ("100 mg",), "PO", ("BID",))),
    _M(("senna", ("8.6 mg", "17.2 mg"), "PO", ("qHS",))),
    _M(("amlodipine", ("5 mg", "10 mg"), "PO", ("daily",))),
    _M(("levothyroxine", ("50 mcg", "75 mcg", "112 mcg"), "PO", ("daily",))),
    _M(("sertraline", ("50 mg", "100 mg"), "PO", ("daily",))),
    _M(("simvastatin", ("20 mg", "40 mg"), "PO", ("qHS",))),
    _M(("Tylenol", ("650 mg",), "PO", ("q6h prn",))),
    _M(("Lasix", ("40 mg",), "IV", ("x1",))),
    _M(("Coumadin", ("5 mg", "2.5 mg"), "PO", ("daily",))),
    _M(("magnesium oxide", ("400 mg",), "PO", ("daily",))),
    _M(("melatonin", ("3 mg",), "PO", ("qHS prn",))),
]

#: lab name -> (low, high, decimals, unit)
LABS: dict[str, tuple] = {
    "Na": (128, 146, 0, ""), "K": (3.1, 5.9, 1, ""), "Cl": (95, 110, 0, ""), "bicarb": (14, 30, 0, ""),
    "BUN": (8, 78, 0, ""), "Cr": (0.6, 5.8, 1, ""), "glucose": (68, 480, 0, ""), "WBC": (2.1, 21.5, 1, ""),
    "Hgb": (7.2, 15.8, 1, ""), "Plt": (45, 480, 0, ""), "INR": (0.9, 3.4, 1, ""), "PTT": (24, 48, 1, ""),
    "BNP": (40, 3800, 0, ""), "lactate": (0.6, 5.2, 1, ""), "procalcitonin": (0.05, 8.4, 2, ""),
    "HbA1c": (5.4, 13.9, 1, "%"), "LDL": (48, 190, 0, ""), "pCO2": (34, 78, 0, ""), "pH": (7.18, 7.46, 2, ""),
    "HCO3": (18, 38, 0, ""), "AG": (8, 28, 0, ""), "ANC": (0.2, 9.8, 1, ""), "phos": (2.4, 8.9, 1, ""),
    "troponin": (0.01, 0.84, 2, ""), "TSH": (0.3, 6.1, 2, ""), "Mg": (1.5, 2.6, 1, ""),
}

_VITALS = ["T", "HR", "BP", "RR", "SpO2", "Wt"]

#: eponyms and named entities that are NOT PHI (hard negatives). Some share a surname
#: with generated patients/doctors (Parkinson, Bell, Foley, Graves, ...).
EPONYM_DISEASES = [
    "Parkinson's disease", "Bell's palsy", "Crohn's disease", "Graves' disease", "Hodgkin lymphoma",
    "Cushing's syndrome", "Addison's disease", "Alzheimer's dementia", "Wilson's disease", "Down syndrome",
    "Barrett's esophagus", "Raynaud's phenomenon", "Brown-Sequard syndrome", "Lyme disease",
    "West Nile virus", "Mallory-Weiss tear", "Guillain-Barre syndrome",
]
#: eponymous signs, scores, devices and procedures used in exam / course sentences
_EPONYM_OTHER = [
    "Foley catheter", "Babinski sign", "Murphy's sign", "Glasgow Coma Scale", "Swan-Ganz catheter",
    "Holter monitor", "Whipple procedure", "Nissen fundoplication", "Hartmann's procedure",
]
_EPONYMS = EPONYM_DISEASES + _EPONYM_OTHER
#: place-like words that are not PHI in context
_NON_PHI_PLACE_TERMS = ["Lyme disease", "West Nile virus", "Rocky Mountain spotted fever", "Norwalk virus"]

#: last names that are also common words, diseases or eponyms (hard positives).
HARD_LAST_NAMES = ["Brown", "May", "Parkinson", "Hope", "Will", "Bishop", "Bell", "Foley", "Graves",
                   "Wilson", "Crohn", "Addison", "Cushing", "Hodgkin", "Little", "Young", "White",
                   "Black", "Rice", "Park", "Banks", "Hill", "Marsh", "Walker", "Barrett", "Mallory"]
HARD_FIRST_NAMES = ["May", "Will", "Hope", "June", "April", "Faith", "Grace", "Rose", "Mark", "Bill",
                    "Joy", "Summer", "Georgia", "Austin", "Jordan", "Florence", "Virginia", "Dawn", "Sky"]

#: fallback professions (Faker's ``job`` is used first)
PROFESSIONS_EN = ["teacher", "nurse", "truck driver", "carpenter", "accountant", "farmer", "electrician",
                  "engineer", "retired machinist", "cashier", "lawyer", "firefighter", "chef", "mail carrier"]

NURSING_OBS = [
    "resting comfortably in bed", "ambulated in hallway with walker", "tolerating diet without nausea",
    "voiding without difficulty", "skin warm and dry, intact", "turned q2h, no redness over sacrum",
    "denies pain at this time", "pain 4/10, medicated with acetaminophen with relief",
    "A&O x3", "lungs clear bilaterally", "IV site without redness or swelling", "call light within reach",
    "family at bedside", "fall precautions maintained", "O2 at 2 L NC, sats 95%", "bowel sounds active x4",
    "Foley catheter draining clear yellow urine", "incentive spirometer used x10 q1h",
    "refused evening dose of heparin", "up to chair for 2 hours", "glucose 182, covered per sliding scale",
]

#: full form -> abbreviated form (applied to template literals of terse sites)
ABBREVIATIONS = {
    "patient": "pt", "Patient": "Pt", "with": "w/", "without": "w/o", "history of": "h/o",
    "status post": "s/p", "complains of": "c/o", "blood pressure": "BP", "heart rate": "HR",
    "follow up": "f/u", "shortness of breath": "SOB", "as needed": "prn", "temperature": "temp", "hospital day": "HD", "discharge": "d/c", "diagnosis": "dx",
    "treatment": "tx", "history": "hx", "bilateral": "b/l",
}

#: non-PHI words that terse sites misspell now and then
_SPELLING_TARGETS = ["patient", "history", "abdomen", "tolerating", "pneumonia", "diarrhea", "received",
                    "discharge", "hemoglobin", "potassium", "catheter", "edema", "bilateral", "medications"]

# --- cancer registry topography (primary site -> subsites), after ICD-O-3 --------------------
#: primary site -> (ICD-O-3 code prefix, {subsite code: (name, [surface phrases])}, histologies)
PRIMARY_SITES: dict[str, dict] = {
    "breast": {
        "code": "C50",
        "organ": ["breast"],
        "subsites": {
            "C50.0": ("nipple", ["nipple", "nipple-areolar complex", "retroareolar region"]),
            "C50.1": ("central portion", ["central portion of the breast", "subareolar", "central breast"]),
            "C50.2": ("upper-inner quadrant", ["upper inner quadrant", "UIQ"]),
            "C50.3": ("lower-inner quadrant", ["lower inner quadrant", "LIQ"]),
            "C50.4": ("upper-outer quadrant", ["upper outer quadrant", "UOQ"]),
            "C50.5": ("lower-outer quadrant", ["lower outer quadrant", "LOQ"]),
            "C50.8": ("overlapping lesion", ["12 o'clock position spanning both upper quadrants", "overlapping quadrants"]),
            "C50.9": ("breast, NOS", ["breast", "breast, not otherwise specified"]),
        },
        "histology": ["invasive ductal carcinoma", "invasive lobular carcinoma", "ductal carcinoma in situ",
                      "invasive mammary carcinoma, no special type"],
        "specimen": ["core needle biopsy", "lumpectomy", "partial mastectomy", "total mastectomy"],
        "extra": ["Nottingham histologic grade {g}", "ER positive (90%), PR positive (60%), HER2 negative (1+)",
                  "Ki-67 proliferation index 20%", "Bloom-Richardson score 6/9"],
    },
    "lung": {
        "code": "C34",
        "organ": ["lung"],
        "subsites": {
            "C34.0": ("main bronchus", ["main bronchus", "carina", "mainstem bronchus"]),
            "C34.1": ("upper lobe", ["upper lobe", "apical segment of the upper lobe", "lingula"]),
            "C34.2": ("middle lobe", ["right middle lobe", "middle lobe"]),
            "C34.3": ("lower lobe", ["lower lobe", "superior segment of the lower lobe", "basal segment"]),
            "C34.9": ("lung, NOS", ["lung", "lung, site not specified"]),
        },
        "histology": ["adenocarcinoma", "squamous cell carcinoma", "small cell carcinoma",
                      "large cell neuroendocrine carcinoma"],
        "specimen": ["wedge resection", "lobectomy", "EBUS-guided FNA", "CT-guided core biopsy"],
        "extra": ["PD-L1 TPS 60%", "EGFR mutation not detected", "ALK rearrangement negative",
                  "visceral pleural invasion present"],
    },
    "colorectal": {
        "code": "C18-C20",
        "organ": ["colon", "large bowel"],
        "subsites": {
            "C18.0": ("cecum", ["cecum", "cecal"]),
            "C18.2": ("ascending colon", ["ascending colon", "right colon"]),
            "C18.3": ("hepatic flexure", ["hepatic flexure"]),
            "C18.4": ("transverse colon", ["transverse colon"]),
            "C18.6": ("descending colon", ["descending colon", "left colon"]),
            "C18.7": ("sigmoid colon", ["sigmoid colon", "sigmoid"]),
            "C20.9": ("rectum", ["rectum", "rectal", "low anterior rectum"]),
        },
        "histology": ["adenocarcinoma", "mucinous adenocarcinoma", "signet ring cell carcinoma",
                      "adenocarcinoma arising in a tubulovillous adenoma"],
        "specimen": ["right hemicolectomy", "sigmoidectomy", "low anterior resection", "colonoscopic biopsy"],
        "extra": ["mismatch repair proteins intact", "lymphovascular invasion present",
                  "tumor deposits absent", "KRAS G12D mutation detected"],
    },
    "prostate": {
        "code": "C61",
        "organ": ["prostate"],
        "subsites": {
            "C61.9": ("prostate gland", ["prostate", "prostate gland", "prostatic"]),
        },
        "histology": ["acinar adenocarcinoma", "prostatic adenocarcinoma", "ductal adenocarcinoma"],
        "specimen": ["12-core needle biopsy", "radical prostatectomy", "TURP chips"],
        "extra": ["Gleason score 3+4=7 (Grade Group 2)", "Gleason score 4+4=8 (Grade Group 4)",
                  "perineural invasion identified", "extraprostatic extension absent"],
    },
    "skin": {
        "code": "C44",
        "organ": ["skin"],
        "subsites": {
            "C44.3": ("skin of face", ["cheek", "nasal ala", "forehead", "skin of the face"]),
            "C44.4": ("skin of scalp and neck", ["scalp", "posterior neck", "vertex of scalp"]),
            "C44.5": ("skin of trunk", ["upper back", "chest wall skin", "abdominal wall skin", "skin of the trunk"]),
            "C44.6": ("skin of upper limb", ["forearm", "dorsal hand", "upper arm", "shoulder"]),
            "C44.7": ("skin of lower limb", ["shin", "calf", "thigh", "dorsal foot"]),
        },
        "histology": ["malignant melanoma, superficial spreading type", "basal cell carcinoma, nodular type",
                      "invasive squamous cell carcinoma", "lentigo maligna melanoma"],
        "specimen": ["shave biopsy", "punch biopsy", "wide local excision", "excisional biopsy"],
        "extra": ["Breslow depth 1.2 mm", "Clark level IV", "mitotic rate 2/mm2", "ulceration absent"],
    },
    "bladder": {
        "code": "C67",
        "organ": ["bladder", "urinary bladder"],
        "subsites": {
            "C67.0": ("trigone", ["trigone", "bladder trigone"]),
            "C67.2": ("lateral wall", ["lateral wall", "left lateral wall", "right lateral wall"]),
            "C67.4": ("posterior wall", ["posterior wall", "posterior bladder wall"]),
            "C67.9": ("bladder, NOS", ["bladder", "urinary bladder, NOS"]),
        },
        "histology": ["high grade papillary urothelial carcinoma", "urothelial carcinoma in situ",
                      "low grade papillary urothelial carcinoma", "invasive urothelial carcinoma"],
        "specimen": ["TURBT", "cold cup biopsy", "radical cystectomy"],
        "extra": ["muscularis propria present and not involved", "lamina propria invasion present",
                  "no lymphovascular invasion", "variant histology absent"],
    },
}
