"""Writes the recall evaluation corpus: memory/ (personal notes) and questions.json.

The notes are those of one person (Sam) kept over a few years: people, projects, places,
health, finances, home, preferences, and a few free-form pages; about a third are hand-written
without frontmatter. The questions are phrased the way a person asks an assistant ("when should
I send Nadia a card?"), not copied from the note, and each names the note that answers it.
Deterministic (seeded): re-running writes the same files.

    python bench/recall_corpus/make_corpus.py [OUT_DIR]   (default: bench/recall_corpus)
"""

from __future__ import annotations

import json
import random
import shutil
import sys
from pathlib import Path

R = random.Random(20261130)

FIRST = """Nadia Tomasz Priya Olu Greta Hamish Ines Kofi Saoirse Bartek Mei Rafael Astrid Dev Fatima
Lorcan Yuki Emeka Hannelore Ciaran Zainab Matteo Ingrid Tariq Bronwen Jonas Amara Felix Ruth Dmitri
Leonie Kwame Isolde Rohan Maeve Anders Chiara Idris Paloma Callum Sunita Henrik Ottilie Jamal Agnieszka
Bram Rosalind Tobias Ayesha Declan Marisol Pieter Niamh Esteban Keziah Lars Farah Gideon Wilhelmina Arjun
Delphine Cormac Ludmila Obi Signe Ravi Clementine Hugo Zofia Malik Annika Fergus Lucia Emil Thandiwe
Rupert Magda Sven Imogen Kenji Beatriz Alasdair Noor Viktor Elspeth Ade Marguerite Casimir Leila Torsten
Winifred Sandeep Orla Mikkel Juno Bashir Philippa Stellan Adaeze Gwen Laszlo Henrietta Ezra Solveig Omar
Cressida Nikhil Tamsin Aurelio Dagny Kasper Ottoline""".split()
LAST = """Okafor Kowalski Raman Adeyemi Lindqvist Baird Moreau Mensah Byrne Nowak Chen Alvarez Holm Patel
Haddad Quinn Tanaka Eze Vogel Doyle Rahman Ricci Berg Aziz Pryce Weber Diallo Roth Levin Sokolov Fischer
Boateng Marsh Iyer Gallagher Nilsson Romano Jones Ortega Fraser Shah Dahl Price Hassan Wrobel Visser
Hale Kaur Brennan Ruiz Janssen Kelly Vega Abara Lund Siddiqui Marsh Wren Menon Duval Kavanagh Petrova
Nwosu Aas Rao Finch Carvalho Zielinski Barros Sorensen Mackay Santos Brandt Moyo Ashdown Lewandowska
Strand Cole Ito Freitas Munro Qureshi Volkov Gunn Obi Lemaire Jablonski Farouk Ekdahl Oakes Grewal Ni
Lindgren Reyes Karimi Ashby Lund Nkemelu Evans Szabo Carrow Mizrahi Aalto Yilmaz Penrose Desai Trevelyan
Moretti Halvorsen Krogh Fane""".split()
CITIES = ["Bristol", "Leeds", "Glasgow", "Cardiff", "Norwich", "York", "Brighton", "Lisbon", "Gdansk",
          "Manchester", "Edinburgh", "Sheffield", "Bath", "Dublin", "Rotterdam", "Lyon", "Exeter", "Hull",
          "Aberdeen", "Oxford", "Valencia", "Malmo", "Nottingham", "Cork", "Inverness", "Durham"]
JOBS = [("teaches chemistry", "a secondary school"), ("is a nurse", "the Royal Infirmary"),
        ("writes software", "a payments startup"), ("is an architect", "a small practice"),
        ("runs a bakery", "her own shop"), ("is a civil engineer", "the council"),
        ("works in marketing", "a brewery"), ("is a vet", "a farm practice"),
        ("drives trains", "Northern Rail"), ("is a solicitor", "a family law firm"),
        ("is a physiotherapist", "a sports clinic"), ("does the accounts", "a housing charity"),
        ("is a carpenter", "a boat yard"), ("is a GP", "a city surgery"), ("lectures in history", "the university"),
        ("is a sound engineer", "a recording studio"), ("manages a bookshop", "an independent bookshop"),
        ("is a pharmacist", "a high street chemist"), ("works as a translator", "the European office"),
        ("is a pilot", "a regional airline"), ("is a gardener", "the botanic gardens"),
        ("is a data analyst", "an energy company"), ("is a chef", "a tapas bar"),
        ("is a paramedic", "the ambulance service"), ("is an electrician", "a one-man business")]
HOBBIES = ["bouldering", "sea swimming", "birdwatching", "pottery", "cold-water rowing", "chess",
           "marathon training", "sourdough baking", "choir singing", "allotment growing", "salsa dancing",
           "restoring old bikes", "jigsaw puzzles", "fly fishing", "crochet", "board games", "film photography",
           "trail running", "beekeeping", "woodturning", "playing the cello", "kite surfing", "stargazing",
           "model railways", "wild camping", "learning Japanese", "roller derby", "quilting"]
FOODS = ["oolong tea", "dark chocolate", "Thai curries", "smoked fish", "real ale", "Turkish delight",
         "pistachio anything", "proper espresso", "spicy ramen", "lemon drizzle cake", "oysters",
         "Malbec", "kimchi", "marzipan", "liquorice", "gin with elderflower"]
AVOIDS = ["nuts (allergic)", "gluten (coeliac)", "shellfish", "dairy", "meat (vegetarian)", "pork",
          "mushrooms", "anything with coriander", "alcohol", "eggs"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]
# (relation phrase, unique?) unique relations are asked about without a name
UNIQUE_REL = ["sister", "brother", "mum", "dad", "grandmother", "uncle", "aunt", "cousin", "godson",
              "dentist", "landlord", "boss", "piano teacher", "vet", "accountant", "plumber",
              "mechanic", "hairdresser", "therapist", "childminder", "best friend", "personal trainer",
              "mortgage adviser", "driving instructor", "goddaughter"]
COMMON_REL = ["friend from university", "colleague", "neighbour", "friend from the climbing wall",
              "old school friend", "friend from choir", "former colleague", "friend from the allotments",
              "partner's friend", "friend from book club"]

SHE = {"sister", "mum", "grandmother", "aunt", "goddaughter"}
HE = {"brother", "dad", "uncle", "godson"}
UNIQUE_REL_Q = {
    "sister": "when is my sister's birthday?",
    "brother": "what does my brother do for work these days?",
    "mum": "what kind of present would mum like?",
    "dad": "where is dad living now?",
    "grandmother": "when should I send gran's birthday card? my grandmother I mean",
    "uncle": "what's my uncle into at the moment?",
    "aunt": "what can't my aunt eat?",
    "dentist": "who is my dentist again?",
    "landlord": "how do I get hold of the landlord?",
    "boss": "what is my boss's name?",
    "piano teacher": "who teaches me piano?",
    "vet": "who's the vet we use for the cat?",
    "accountant": "who does my accounts?",
    "plumber": "which plumber did we use last time?",
    "mechanic": "who fixes the car?",
    "hairdresser": "what's my hairdresser called?",
    "childminder": "who looks after the kids after school?",
    "best friend": "what's my best friend doing for a job now?",
    "personal trainer": "who is the personal trainer I see at the gym?",
    "driving instructor": "name of the driving instructor?",
}

PERSON_Q = [
    ("birthday", ["When is {f}'s birthday?", "what date should I send {f} a card", "when does {f} turn a year older?",
                  "is {f}'s birthday coming up?"]),
    ("job", ["What does {f} do for a living?", "where does {f} work?", "what's {f}'s job again"]),
    ("city", ["Which city is {f} in these days?", "where did {f} end up living?", "what town does {f} live in"]),
    ("hobby", ["what is {f} into at the moment?", "what does {f} do at weekends?", "any hobbies {f} has that I should know about?"]),
    ("food", ["what treat could I bring {f}?", "is there any food {f} avoids?", "planning dinner with {f}, anything to watch out for?"]),
    ("kids", ["what are {f}'s kids called?", "how many children does {f} have?"]),
]


def _day() -> str:
    return f"{R.randint(1, 28)} {R.choice(MONTHS)}"


def people(notes: dict, questions: list, names_out: list) -> None:
    rels = UNIQUE_REL + [R.choice(COMMON_REL) for _ in range(120 - len(UNIQUE_REL))]
    firsts = FIRST[:120]
    lasts = list(LAST)
    R.shuffle(lasts)
    for i, (first, rel) in enumerate(zip(firsts, rels)):
        last = lasts[i % len(lasts)]
        city = R.choice(CITIES)
        job, where = R.choice(JOBS)
        hobby = R.choice(HOBBIES)
        food = R.choice(FOODS)
        avoid = R.choice(AVOIDS)
        bday = _day()
        kids = R.sample(FIRST[120:] + ["Ada", "Leo", "Isla", "Max", "Zara", "Finn", "Mila", "Theo"], R.randint(0, 2))
        slug = f"people/{first.lower()}-{last.lower()}.md" if i % 3 else f"people/{first.lower()}.md"
        facts = {"birthday": bday, "job": job, "city": city, "hobby": hobby, "food": food, "kids": kids}
        if i % 3 == 1:   # hand-written, no frontmatter
            lines = [f"# {first} {last}", "",
                     f"My {rel}. Lives in {city}.",
                     f"- job: {job} at {where}",
                     f"- bday {bday}",
                     f"- big on {hobby} lately",
                     f"- loves {food}; no {avoid}"]
            if kids:
                lines.append(f"- kids: {', '.join(kids)}")
            lines.append(f"- last caught up {R.choice(['over coffee', 'on the phone', 'at a wedding', 'at the pub'])} in {R.choice(MONTHS)}")
            text = "\n".join(lines) + "\n"
        else:
            pron = ("She" if rel in SHE else "He" if rel in HE else R.choice(["She", "He", "They"]))
            verb = "work" if pron == "They" else "works"
            desc = f"{first} {last}, my {rel}, {city}"
            body = [f"{first} is my {rel}. {pron} {job} ({where}).",
                    f"Birthday: {bday}.",
                    f"{pron} {'have' if pron == 'They' else 'has'} got really into {hobby}.",
                    f"Likes {food}. Avoid: {avoid}.",
                    f"Lives in {city}."]
            if kids:
                body.append(f"Children: {' and '.join(kids)}.")
            body.append(f"{pron} {verb} {'part time' if R.random() < 0.3 else 'full time'}.")
            text = f"---\ndescription: {desc}\ncategory: person\n---\n" + "\n".join(body) + "\n"
        notes[slug] = text
        names_out.append((first, last, slug, rel, facts))
        # questions: a unique relation is asked about by relation, others by name
        if rel in UNIQUE_REL_Q:
            questions.append({"question": UNIQUE_REL_Q[rel], "answer": slug, "alternates": []})
        elif i % 2 == 0:
            kind, forms = R.choice([q for q in PERSON_Q if q[0] != "kids" or kids])
            questions.append({"question": R.choice(forms).format(f=first), "answer": slug, "alternates": []})


# Projects, places, health, finances, home, preferences: (path, description or None, body, [questions])
HAND = [
    ("projects/kitchen-renovation.md", "Kitchen renovation - fitter booked, worktops ordered",
     "Fitter: {p0}. Start date 12 May, about three weeks.\nWorktops: oak, ordered from Howdens, £1,840.\n"
     "Still to choose: splashback tiles and the tap.\nBudget ceiling £14k; spent £9.2k so far.",
     ["where are we with redoing the kitchen?", "how much have we spent on the new kitchen so far?"]),
    ("projects/garden-raised-beds.md", "Raised beds in the back garden - spring plan",
     "Three beds, 2.4 m x 1.2 m, scaffold boards. Soil delivery from the topsoil place on Mill Lane.\n"
     "Plan: potatoes in bed 1, brassicas in bed 2, beans + squash in bed 3. Netting for the pigeons.",
     ["what am I planting in the veg beds this spring?"]),
    ("projects/learn-spanish.md", "Learning Spanish - B1 by the summer trip",
     "Duolingo streak + Tuesday evening class at the adult college (teacher: {p1}).\n"
     "Weak spots: subjunctive, listening at speed. Podcast: Coffee Break Spanish.",
     ["how's my language learning going and when is the class?"]),
    ("projects/tax-return-2026.md", "Self assessment tax return 2025-26",
     "Deadline 31 January. Need: P60 from work, rental income statement, pension contributions, "
     "the freelance invoices (7 of them). Accountant: {p2}. UTR is in the HMRC letter in the blue folder.",
     ["what paperwork do I need for HMRC this year?", "when do I have to file my self assessment?"]),
    ("projects/bathroom-leak.md", "Bathroom leak under the bath - plumber came twice",
     "Drip from the waste trap. {p3} replaced the seal in March; came back in April, new trap.\n"
     "Ceiling stain in the hall below: repaint once dry (Dulux 'Jasmine White').",
     ["what happened with the drip under the tub?"]),
    ("projects/wedding-speech.md", "Best man speech for {p4}'s wedding, 9 August",
     "Five minutes max. Stories: the canoe trip, the interview suit. Thank the parents. "
     "No mention of the Amsterdam weekend. Practise on Sunday.",
     ["what should go in the speech I'm giving at the wedding?"]),
    ("projects/loft-conversion.md", None,
     "# Loft conversion\n\nArchitect drawings done, planning permission granted 3 Feb.\n"
     "Quotes: Hale & Sons £48k, Oakes Build £52k. Leaning towards Hale.\nNeed building control sign-off.",
     ["did the council approve the attic room?", "which builder quote was cheaper for the loft?"]),
    ("projects/novel-draft.md", "Novel draft - 'The Salt Road', chapter 9 of 20",
     "Target 80k words; at 41k. Writing group reads chapter 8 next month. Stuck on the lighthouse scene.",
     ["how far have I got with the book I'm writing?"]),
    ("projects/bike-rebuild.md", None,
     "Rebuilding the old Raleigh: new chain, cables, bar tape done. Waiting on a 27-inch rear wheel.\n"
     "Bottom bracket creaks - needs a facing tool (borrow from the co-op workshop).",
     ["what's left to do on the old bicycle?"]),
    ("projects/charity-run.md", "Half marathon for the hospice, 14 September",
     "Training plan: 3 runs a week, long run Sunday. Fundraising page target £500, at £310.\n"
     "Shoes: Brooks Ghost, bought in April.",
     ["how much money have I raised for the race so far?"]),
    ("projects/photo-album.md", "Family photo album for mum and dad's 40th anniversary",
     "Scan the slides from the loft (about 300). Order from the print place by 1 June. Ask {p5} for the wedding photos.",
     ["what's the plan for my parents' ruby wedding present?"]),
    ("projects/home-server.md", None,
     "Home server (the old ThinkPad): Nextcloud + Jellyfin in Docker. Backups to the USB disk nightly at 02:00.\n"
     "TODO: set up off-site backup to the cloud bucket; renew the TLS cert automatically.",
     ["when do my files get backed up at home?"]),
    ("projects/job-search.md", "Looking for a new role - applications and interviews",
     "Applied: Monzo (rejected), Octopus Energy (2nd interview 20 June), a climate startup in Leeds (waiting).\n"
     "Want: 4-day week, remote-first, senior engineer level.",
     ["which companies have I interviewed with?", "when is my next interview?"]),
    ("projects/wildflower-meadow.md", "Turning the back lawn into a wildflower meadow",
     "Scarified in September, sowed yellow rattle first, then the native mix. Cut once in late summer, remove the hay.",
     ["how do I look after the flower patch where the lawn used to be?"]),
    ("projects/choir-concert.md", "Choir concert, Christmas, St Mary's",
     "Pieces: Britten's Ceremony of Carols, two Rutter. Rehearsals Thursdays 7:30. Tickets £12, sell 10.",
     ["what are we singing at the December concert?"]),
    ("places/the-old-bell.md", "The Old Bell - pub with the good Sunday roast",
     "Book ahead for Sunday. Get the lamb. Dog friendly. 10 minutes walk past the church.",
     ["where's the pub that does a good Sunday lunch?"]),
    ("places/dentist-surgery.md", "Dental surgery on Park Row",
     "Check-ups every 9 months. Parking behind the library. Hygienist appointments need booking 6 weeks ahead.",
     ["how often should I get my teeth checked?"]),
    ("places/lake-district-cottage.md", "Holiday cottage near Coniston we loved",
     "Booked through the farm directly (not Airbnb). Wood burner, sleeps 6, walk to the lake. Key in the lockbox, code changes each stay.",
     ["which holiday let in the Lakes did we like?"]),
    ("places/lisbon-trip.md", None,
     "Lisbon, October: stayed in Alfama. Best meal: the grilled sardines place near the castle.\n"
     "Tram 28 is a tourist trap, walk instead. Day trip to Sintra - go early.",
     ["tips for going back to Portugal?"]),
    ("places/kids-swimming-pool.md", "Leisure centre pool - kids' lessons",
     "Lessons Saturday 9:15 (Ada) and 10:00 (Leo). Bring a pound coin for the lockers.",
     ["what time are the children's swimming lessons?"]),
    ("places/allotment.md", "Allotment plot 14B, Fieldgate Lane",
     "Gate code 4471 (changes in April). Water troughs off Nov-Mar. Rent due 1 October, £38.",
     ["when do I pay for my vegetable plot?", "what's the code for the allotment gate?"]),
    ("places/garage.md", "Garage for the car - Kwik Autos",
     "MOT due every March. They know the Golf's clutch history. Ask for a courtesy car.",
     ["when is the car's MOT due?"]),
    ("places/vets.md", "Vet practice for Pepper the cat",
     "Annual booster in May. Pepper is on Cat Flea spot-on monthly. Insurance: Petplan, excess £99.",
     ["when does the cat need her jab?"]),
    ("health/blood-pressure.md", "Blood pressure - ramipril, home readings",
     "Ramipril 5 mg every morning since January. Home readings twice a week, aim under 135/85.\n"
     "Review with the GP in July. Cut back on salt; walk 30 min daily.",
     ["what dose is my heart medication?", "when is my next check on the hypertension?"]),
    ("health/allergies.md", "Allergies - penicillin and hay fever",
     "Penicillin: rash (told in 2009). Hay fever May-July: cetirizine, start in April.",
     ["which antibiotics am I allergic to?"]),
    ("health/knee-physio.md", None,
     "Left knee (runner's knee). Physio exercises: clamshells 3x15, step-downs, wall sits. Ice after long runs.\n"
     "Next physio session 3 June.",
     ["what exercises did the physio give me?"]),
    ("health/sleep.md", "Sleep - what helps",
     "No screens after 10. Magnesium at night. Bedroom at 17 degrees. Caffeine only before noon.",
     ["why do I keep waking up at 3am, what was I supposed to do?"]),
    ("health/eyes.md", "Eye test and glasses",
     "Short-sighted, -2.25 both eyes. Eye test every 2 years, last one November. Spare glasses in the car.",
     ["when do I need my eyes tested again?"]),
    ("health/vaccinations.md", "Vaccinations record",
     "Flu jab every October at the pharmacy. Tetanus booster 2019. Hep A for the Morocco trip 2023.",
     ["when did I last have a tetanus shot?"]),
    ("finances/mortgage.md", "Mortgage - fixed rate ends March 2027",
     "Nationwide, 5-year fix at 1.89% ends March 2027. Balance about £186k. Start remortgage talk 6 months before.",
     ["when does the home loan deal run out?"]),
    ("finances/pension.md", "Pensions - work scheme and the old one",
     "Work: 5% + 5% employer, Aviva. Old pension from the agency job with Scottish Widows - consolidate?",
     ["where is my retirement savings held?"]),
    ("finances/subscriptions.md", "Subscriptions and what they cost",
     "Netflix £10.99, Spotify family £17.99, Guardian £12, gym £38, iCloud £2.99, The Economist (cancel!).",
     ["how much do I pay for streaming music?", "which monthly payments should I cancel?"]),
    ("finances/budget.md", None,
     "Monthly budget: groceries £550, eating out £120, transport £90, savings £400 to the ISA.\n"
     "Overspent on eating out in May.",
     ["how much do we plan to spend on food shopping a month?"]),
    ("finances/savings-isa.md", "ISA and savings pots",
     "Stocks & shares ISA with Vanguard (global all-cap). Emergency fund: 4 months, Marcus easy access.",
     ["where is my rainy day money kept?"]),
    ("finances/insurance.md", "Insurance renewals",
     "Home insurance renews 14 Feb (Direct Line). Car 2 Sept (Admiral). Travel: annual multi-trip with the bank account.",
     ["when is the house insurance due for renewal?"]),
    ("finances/car-loan.md", None,
     "Car finance for the Golf: £212/month, 14 payments left, balloon £6k option in 2027.",
     ["how many payments are left on the car?"]),
    ("home/boiler.md", "Boiler - Worcester Bosch, service every autumn",
     "Installed 2018, 10-year warranty if serviced yearly. Pressure should be 1-1.5 bar; top up via the silver loop.\n"
     "Service booked with the gas engineer in October.",
     ["the heating pressure dropped, what's normal?", "is the boiler still under guarantee?"]),
    ("home/wifi.md", "Broadband and wifi setup",
     "Provider: Zen, 900 Mb fibre. Router in the hall cupboard; mesh node upstairs. Guest network name 'garden-guest'.",
     ["who is our internet provider?"]),
    ("home/bins.md", "Bin collection days",
     "Black bin: Tuesday, fortnightly. Recycling: Tuesday, the other weeks. Garden waste: Friday, Mar-Nov.",
     ["which day does the rubbish get collected?"]),
    ("home/washing-machine.md", None,
     "Bosch Serie 6 washer, bought June 2022 from AO, 5-year warranty. Filter behind the flap bottom right - clean monthly. "
     "E18 error = drain blocked.",
     ["the washer shows an error code E18, what does it mean?"]),
    ("home/car.md", "The car - VW Golf 2019",
     "Reg in the V5 folder. Tyres 225/45 R17, pressure 36 psi front. Service every 12 months. Spare key in the desk drawer.",
     ["what tyre pressure does the Golf need?"]),
    ("home/garden-shed.md", "Shed - padlock code and what's in it",
     "Combination 2-9-1-7. Lawnmower (Bosch Rotak), strimmer, the camping gear in the blue boxes.",
     ["where are the tents stored?"]),
    ("preferences/coffee.md", "Coffee - how I like it",
     "Flat white, oat milk. At home: V60, 15 g to 250 ml, beans from the roastery on North Street. No decaf after lunch? Actually none at all after 2pm.",
     ["how do I take my morning brew?"]),
    ("preferences/music.md", None,
     "Current rotation: Khruangbin, Nils Frahm, Bonobo. Gig wishlist: Radiohead if they ever tour. Hate: shuffle mode.",
     ["what bands am I listening to right now?"]),
    ("preferences/reading.md", "Books - reading list and favourites",
     "Reading now: 'Piranesi'. Next: 'The Overstory'. Favourite ever: 'Middlemarch'. Book club picks on the last Thursday.",
     ["what novel am I in the middle of?"]),
    ("preferences/travel.md", "How I like to travel",
     "Trains over planes in Europe. Aisle seat. Carry-on only. Book ferries early for the summer.",
     ["do I prefer window or aisle?"]),
    ("preferences/food.md", "Food likes and dislikes",
     "Love: Sichuan, anything with miso, good bread. Don't like: olives, tinned tuna, very sweet desserts.",
     ["what cuisines do I love?"]),
    ("preferences/work-style.md", "Working preferences",
     "Deep work mornings, meetings after 1pm. Mute Slack in focus blocks. Fridays for admin.",
     ["when should people book meetings with me?"]),
    ("how-i-work.md", None,
     "How I work: mornings are for writing, afternoons for calls. I keep a paper notebook for the week plan.",
     ["when do I do my writing?"]),
    ("journal/2026-03-holiday-ideas.md", None,
     "Ideas for the summer: Brittany by ferry, or the Slovenian lakes. Kids want a beach. Budget £2.5k.",
     ["where were we thinking of going on holiday this summer?"]),
    ("journal/2026-05-new-year-goals-review.md", None,
     "Goals check: running - on track; reading 20 books - 7 so far; less phone - failing.",
     ["how am I doing on my resolutions?"]),
    ("pets/pepper.md", "Pepper - our tabby cat, 7 years old",
     "Eats the kidney-care dry food only. Hates the carrier; towel trick works. Microchip number in the vet folder.",
     ["what food does our cat eat?"]),
    ("recipes/dal.md", "Dal - the weeknight one",
     "Red lentils 250 g, onion, garlic, ginger, turmeric, cumin seeds, tin of tomatoes. Tarka at the end with mustard seeds.",
     ["what do I need to make the lentil curry?"]),
    ("recipes/sourdough.md", None,
     "Sourdough: starter fed at 9pm, 500 g flour, 350 g water, 10 g salt. Bulk 5 h, shape, fridge overnight, bake 250 C in the pot.",
     ["how long do I prove the bread dough?"]),
    ("work/team.md", "My team at work",
     "Team: {p6} (tech lead), {p7} (designer), {p8} (PM). 1:1s on Wednesdays. Quarterly planning in the first week.",
     ["who is on my team at work?"]),
    ("work/passwords-policy.md", "Work laptop and security rules",
     "Laptop must be encrypted, VPN for anything internal, rotate the SSH key yearly. Security contact in the wiki.",
     ["what are the rules for the work computer?"]),
]

PLACES_FOOD = [("Saffron House", "Indian", "lamb rogan josh"), ("Luigi's", "Italian", "truffle gnocchi"),
               ("Pho Saigon", "Vietnamese", "beef pho"), ("The Green Fork", "vegan", "cauliflower steak"),
               ("Kyoto Kitchen", "Japanese", "katsu curry"), ("El Toro", "Spanish tapas", "patatas bravas"),
               ("Golden Dragon", "Cantonese", "dim sum baskets"), ("Beirut Nights", "Lebanese", "mixed mezze"),
               ("The Fish Shed", "seafood", "crab linguine"), ("Taco Loco", "Mexican", "al pastor tacos"),
               ("Anatolia", "Turkish", "adana kebab"), ("Seoul Bowl", "Korean", "bibimbap"),
               ("The Crust", "pizza", "nduja pizza"), ("Addis", "Ethiopian", "injera platter"),
               ("Bangkok Street", "Thai", "green curry"), ("Le Petit Coin", "French", "duck confit"),
               ("Athena", "Greek", "lamb kleftiko"), ("Havana Club", "Cuban", "ropa vieja"),
               ("Spice Route", "Malaysian", "laksa"), ("Nordic Table", "Scandinavian", "cured salmon")]
AREAS = ["the harbour", "Old Market", "Stokes Croft", "the high street", "by the station", "Clifton", "Bedminster"]


def places(notes: dict, questions: list) -> None:
    for i, (name, cuisine, dish) in enumerate(PLACES_FOOD):
        slug = "places/" + name.lower().replace("'", "").replace(" ", "-") + ".md"
        area = R.choice(AREAS)
        verdict = R.choice(["would go back", "a bit pricey but worth it", "service slow", "great for groups",
                            "book ahead on Fridays", "cash only"])
        if i % 2:
            text = f"---\ndescription: {name} - {cuisine} restaurant near {area}\ncategory: place\n---\n" \
                   f"Best thing: the {dish}. {verdict.capitalize()}.\nWent with friends in {R.choice(MONTHS)}.\n"
        else:
            text = f"{name} ({cuisine}), {area}.\nOrder the {dish}; {verdict}.\n"
        notes[slug] = text
        if i % 2 == 0:
            q = R.choice([f"what was good to order at {name}?", f"where is {name} again?",
                          f"that {cuisine} place we liked, what was it called?"])
            questions.append({"question": q, "answer": slug, "alternates": []})


SUBS = [("council tax", "£168", "1st"), ("water bill", "£41", "15th"), ("electricity and gas", "£132", "5th"),
        ("phone contract", "£18", "22nd"), ("TV licence", "£14.50", "1st"), ("window cleaner", "£15", "every 4 weeks"),
        ("cleaner", "£60", "Thursdays"), ("kids' football club", "£25", "termly"), ("charity direct debit", "£10", "3rd"),
        ("domain and hosting", "£9", "yearly in June")]


def finances(notes: dict, questions: list) -> None:
    for i, (what, cost, when) in enumerate(SUBS):
        slug = "finances/bills/" + what.replace("'", "").replace(" ", "-") + ".md"
        text = (f"---\ndescription: {what.capitalize()} - {cost}, {when}\ncategory: bill\n---\n"
                f"Paid by direct debit from the joint account. Last checked the rate in {R.choice(MONTHS)}.\n")
        notes[slug] = text
        if i % 2 == 0:
            questions.append({"question": f"how much is the {what} each month?", "answer": slug, "alternates": []})


APPLIANCES = [("dishwasher", "Miele G5210", "salt and rinse aid monthly"),
              ("fridge freezer", "Samsung RB34", "defrost not needed; filter yearly"),
              ("oven", "Neff slide and hide", "pyrolytic clean setting"),
              ("hoover", "Dyson V11", "wash the filter monthly"),
              ("smoke alarms", "FireAngel", "test on the first Monday"),
              ("dehumidifier", "Meaco 12L", "empty the tank daily in winter"),
              ("electric toothbrush", "Oral-B iO", "heads every 3 months"),
              ("car seat", "Maxi-Cosi Pearl", "expires 2029"),
              ("lawnmower", "Bosch Rotak 37", "blade sharpening each spring"),
              ("printer", "Brother HL-L2350", "toner TN2410")]


def home(notes: dict, questions: list) -> None:
    for i, (item, model, care) in enumerate(APPLIANCES):
        slug = "home/appliances/" + item.replace(" ", "-") + ".md"
        year = R.randint(2017, 2025)
        text = (f"{item.capitalize()}: {model}, bought {year}.\nCare: {care}.\n"
                f"Manual PDF saved in the home server's documents folder.\n")
        if i % 2:
            text = f"---\ndescription: {item} - {model}\ncategory: home\n---\n" + text
        notes[slug] = text
        if i % 2 == 0:
            questions.append({"question": f"what model is our {item}?", "answer": slug, "alternates": []})


MEETINGS = ["Agreed to split the cost of the fence.", "Talked about the school run rota.",
            "Lent them the big drill.", "Owes me £40 for the concert tickets.",
            "Recommended a physio in town.", "Moving house in the autumn.", "New puppy, a spaniel called Biscuit.",
            "Starting an MBA part time.", "Back from six months in Chile.", "Training for the Three Peaks."]


def misc(notes: dict, questions: list, names: list) -> None:
    """Short dated notes (meetings, calls) that mention people: realistic distractors."""
    for i in range(75):
        first, last, slug, rel, facts = R.choice(names)
        month = R.choice(MONTHS)
        fact = MEETINGS[i % len(MEETINGS)]
        path = f"journal/2025-{MONTHS.index(month) + 1:02d}-{first.lower()}-catch-up-{i}.md"
        text = f"Catch-up with {first} ({month}). {fact}\n"
        notes[path] = text
        if i % 4 == 0:
            q = {"Agreed to split the cost of the fence.": f"what did {first} and I decide about the fence?",
                 "Talked about the school run rota.": f"what did {first} and I sort out about taking the kids to school?",
                 "Lent them the big drill.": f"who did I lend my drill to? was it {first}?",
                 "Owes me £40 for the concert tickets.": f"does {first} still owe me money for tickets?",
                 "Recommended a physio in town.": f"who recommended a physio to me, {first}?",
                 "Moving house in the autumn.": f"is {first} moving house?",
                 "New puppy, a spaniel called Biscuit.": f"what's {first}'s new dog called?",
                 "Starting an MBA part time.": f"what course is {first} starting?",
                 "Back from six months in Chile.": f"where was {first} travelling for six months?",
                 "Training for the Three Peaks.": f"what challenge is {first} training for?"}[fact]
            questions.append({"question": q, "answer": path, "alternates": []})


WORK = [("incident-review-payments-outage", "Incident review: payments outage on 4 March",
         "Root cause: expired TLS certificate on the internal gateway. Action: automate renewals, alert 30 days ahead.",
         "why did the payments system go down in March?"),
        ("hiring-panel-backend", "Hiring panel for the backend role",
         "Shortlist of four; take-home task on rate limiting. Decision by end of month.",
         "what's the take-home exercise for the engineering candidates?"),
        ("q3-planning", "Q3 planning",
         "Themes: reliability, onboarding flow rewrite, cost cutting on cloud spend (target -15%).",
         "what are the priorities for next quarter?"),
        ("offsite-agenda", "Team offsite in Edinburgh, 18-19 September",
         "Day 1 retro + roadmap, day 2 hack day. Dinner at the Scottish place on Rose Street.",
         "where is the team away day this year?"),
        ("perf-review", "My performance review notes",
         "Strengths: mentoring, incident handling. Growth: write more design docs, speak up in planning.",
         "what feedback did I get in my appraisal?"),
        ("oncall-rota", "On-call rota and handover",
         "One week in six. Handover Monday 10:00. Pager app on the work phone; escalate to the tech lead after 30 min.",
         "how often am I on call?"),
        ("expenses", "Work expenses - how to claim",
         "Claims through the finance portal by the 25th. Receipts photographed. Train travel standard class only.",
         "by what date do I have to submit receipts for reimbursement?"),
        ("training-budget", "Training budget",
         "£1,000 a year per person. Used: the Kubernetes course (£450). Want: a conference ticket for PyCon UK.",
         "how much of my learning allowance have I used?"),
        ("mentoring", "Mentoring a junior engineer",
         "Fortnightly, Thursday lunch. Topics so far: code review habits, estimating, saying no.",
         "when do I meet the person I'm mentoring?"),
        ("migration-postgres", "Database migration to Postgres 16",
         "Dry run on staging went fine; prod cutover planned for a Sunday 06:00 with a 2 hour window.",
         "when is the database upgrade happening?"),
        ("vendor-contracts", "Vendor contracts up for renewal",
         "Monitoring tool renews in November (negotiate multi-year); the error tracker is month to month.",
         "which software licences renew soon at work?"),
        ("reading-group", "Engineering reading group",
         "Current book: Designing Data-Intensive Applications, chapter 5. Meets every other Friday.",
         "what are we reading in the tech book club?"),
        ("security-audit", "Security audit findings",
         "Two medium findings: outdated base images and missing rate limits on login. Fix by the end of the quarter.",
         "what did the pen test find?"),
        ("holiday-cover", "Holiday cover for August",
         "I'm off 4-15 August. Cover for my reviews and on-call swap arranged with the tech lead.",
         "who covers my work when I'm on leave in the summer?"),
        ("architecture-decision-queues", "Decision: job queue technology",
         "Chose a Postgres-backed queue over Kafka: fewer moving parts, volume is small. Revisit at 10x traffic.",
         "why didn't we pick Kafka?"),
        ("customer-feedback", "Customer feedback themes",
         "Top asks: export to CSV, dark mode, faster search. Complaint: confusing billing page.",
         "what features do customers keep asking for?"),
        ("laptop-refresh", "Laptop refresh",
         "New laptop arrives in October; hand the old one to IT with the charger. Back up the dotfiles first.",
         "when do I get a new work computer?"),
        ("okrs", "Personal objectives this half",
         "Ship the onboarding rewrite; cut p95 latency of search to under 200 ms; give one internal talk.",
         "what are my goals at work this half year?"),
        ("conference-talk", "Conference talk proposal",
         "Title: 'Boring technology, happy on-call'. Submitted to the regional dev conference; hear back in June.",
         "what was my talk submission about?"),
        ("commute", "Getting to the office",
         "Office days Tue and Thu. Train 07:42 from the local station, change at Temple Meads. Bike locker 31.",
         "which days do I go into the office?")]


def work(notes: dict, questions: list) -> None:
    for i, (slug, desc, body, q) in enumerate(WORK):
        path = f"work/{slug}.md"
        notes[path] = f"---\ndescription: {desc}\ncategory: work\n---\n{body}\n" if i % 3 else f"# {desc}\n\n{body}\n"
        if i % 2 == 0 or i % 5 == 0:
            questions.append({"question": q, "answer": path, "alternates": []})


def main(out: Path) -> None:
    notes: dict[str, str] = {}
    questions: list[dict] = []
    names: list = []
    people(notes, questions, names)
    for path, desc, body, qs in HAND:
        contacts = {f"p{k}": f"{names[(k * 7 + 3) % len(names)][0]} {names[(k * 7 + 3) % len(names)][1]}" for k in range(9)}
        body = body.format(**contacts)
        desc = desc.format(**contacts) if desc else None
        notes[path] = (f"---\ndescription: {desc}\n---\n{body}\n" if desc else body.rstrip() + "\n")
        for q in qs:
            questions.append({"question": q, "answer": path, "alternates": []})
    places(notes, questions)
    finances(notes, questions)
    home(notes, questions)
    misc(notes, questions, names)
    work(notes, questions)
    notes["index.md"] = ("---\ndescription: Start here - who I am and how these notes are organised\n---\n"
                         "I'm Sam. Notes by area: people/, projects/, places/, health/, finances/, home/, "
                         "preferences/, journal/.\n")
    mem = out / "memory"
    if mem.exists():
        shutil.rmtree(mem)
    for path, text in sorted(notes.items()):
        p = mem / path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    (out / "questions.json").write_text(json.dumps(questions, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(notes)} notes, {len(questions)} questions -> {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent)
