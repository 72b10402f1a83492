"""Writes the answer benchmark's large workspace: bench/answers/large/memory/ and large.json.

The notes are the assistant's memory of one person's life (Sam Okafor, the landscape architect
in Leeds of workspace.example, whose five notes are among them verbatim): family, friends,
neighbours and colleagues, projects, places, health, home, work, recipes, travel and a journal.
About forty notes are written out here by hand, each with the facts some question asks for and
with distractors beside them (Marek Novak the colleague and Marek Nowak the plumber, Lina's
14 March and her cousin Nina's 14 May, two planting deadlines a week apart); the rest are made
from tables with a seeded generator, and a few questions are made from them too. Phone numbers
come from the ranges set aside for drama (07700 900xxx, 0113 496 0xxx, 01904 496 0xxx).
Deterministic: re-running writes the same files. The notes are committed, so the figures do
not depend on this script; run it only to change the corpus.

    python bench/answers/make_large.py [DEST]    (default: bench/answers/)
"""

from __future__ import annotations

import json
import random
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parent.parent / "workspace.example" / "memory"
SEED = 20261201
R = random.Random(SEED)


def note(description: str | None, body: str, category: str | None = None) -> str:
    if description is None:
        return body.strip() + "\n"
    head = f"---\ndescription: {description}\n" + (f"category: {category}\n" if category else "") + "---\n"
    return head + body.strip() + "\n"


# ---------------------------------------------------------------------------------------------
# the notes the hand-written questions are about

KEY = {
    "people/nina-okafor.md": note("Nina Okafor - my cousin, lives in Manchester", """
Nina is my cousin on Dad's side. She is a pharmacist.
Birthday: 14 May.
Phone: 07700 900412
Has a son, Femi, who is nine.""", "person"),
    "people/lena-okoro.md": note("Lena Okoro - friend from university, lives in Bath", """
Lena and I shared a flat in second year. She is a vet at a farm practice near Bath.
Loves climbing and bad puns.""", "person"),
    "people/marek-nowak.md": note("Marek Nowak - neighbour at no. 14, plumber", """
Marek Nowak is a plumber; fixed the kitchen tap in October.
Phone: 07700 900733
Happy to be called in the evening.""", "person"),
    "people/grace-okafor.md": note("Grace Okafor - my mum, lives in York", """
Mum lives in York with Dad, in the house on Bishopthorpe Road.
Birthday: 2 August.
Home phone: 01904 496 0210
Loves her garden, especially the roses. Allergic to cats.""", "person"),
    "people/daniel-okafor.md": note("Daniel Okafor - my dad, lives in York", """
Dad is a retired railway engineer.
Birthday: 19 October.
Mobile: 07700 900155
Follows York City every Saturday.""", "person"),
    "people/tomas-berg.md": note("Tomas Berg - Lina's partner", """
Tomas works as a sound engineer at a recording studio.
Met Lina at a concert in 2019. Vegetarian.""", "person"),
    "people/jo-adebayo.md": note("Jo Adebayo - my best friend, lives in Chapel Allerton", """
Jo and I met at school in York.
Birthday: 3 June.
Phone: 07700 900268
Has a spaniel called Biscuit. Jo does not drink coffee, only mint tea.""", "person"),
    "people/olu-mensah.md": note("Olu Mensah - colleague at the studio, leads the Roundhay Lakeside project", """
Olu joined the studio in 2024. Good at stakeholder meetings.
Phone: 07700 900381""", "person"),
    "people/ruth-baird.md": note("Ruth Baird - neighbour at no. 16", """
Ruth keeps our spare key. Retired teacher, walks her greyhound at 7 every morning.""", "person"),
    "people/gareth-lund.md": note("Gareth Lund - heating engineer (Warmfix)", """
Gareth services the boiler every year.
Phone: 0113 496 0882
Prefers a text the day before.""", "person"),
    "people/priya-patel.md": note("Priya Patel - private client, courtyard garden in Halifax", """
Mrs Patel wants low maintenance planting and a bench in the sun.
Phone: 07700 900590""", "person"),
    "work/studio.md": note("The studio - Finch Hale Landscape, where I work", """
Finch Hale Landscape, 4 Wharf Street, Leeds LS2 7EQ. Eight of us.
I usually get an oat flat white from the Grove Cafe on the ground floor.""", "work"),
    "work/team-meeting.md": note("Weekly studio team meeting", """
Every Tuesday at 10:00 in the Calder room. Bring project updates, keep it to 30 minutes.""", "work"),
    "work/expenses.md": note("Work expenses - mileage and receipts", """
Mileage is paid at 45p per mile. Receipts go to Olivia in accounts by the 25th of the month.""", "work"),
    "projects/roundhay-lakeside.md": note("Roundhay Lakeside path - Olu leads", """
Client: Friends of Roundhay Park. New gravel path and seating around the upper lake.
Consultation boards due 2027-02-26. I do the planting sections.""", "project"),
    "projects/halifax-courtyard.md": note("Halifax courtyard garden for Mrs Patel", """
Private job, evenings and weekends. Planting plan due 2026-12-19.
Yew hedging, hellebores and a multi-stem birch.""", "project"),
    "projects/allotment.md": note("Allotment - plot 17 at Meanwood", """
Rent is 45 pounds a year, due on 1 April, paid to the allotment society.
This year: leeks, broad beans, and the blackcurrant bushes.""", "project"),
    "projects/kitchen-renovation.md": note("Kitchen renovation", """
Quote from Hale & Sons: 8,400 pounds including worktops.
Work starts 2027-01-11 and takes about three weeks. Worktop: oak.""", "project"),
    "places/home.md": note("Home - my flat in Headingley", """
Flat 3, 41 Cardigan Road, Leeds LS6 3AG. Second floor, no lift.""", "place"),
    "places/grove-cafe.md": note("The Grove Cafe", """
Ground floor of 4 Wharf Street. Opens at 7:30 on weekdays. Good soup on Thursdays.""", "place"),
    "places/headingley-dental.md": note("Headingley Dental Practice", """
12 Otley Road, Leeds LS6 2AD.
Phone: 0113 496 0217. Closed on Wednesdays.""", "place"),
    "health/dentist.md": note("Dentist - Dr Haddad", """
I see Dr Haddad at Headingley Dental Practice.
Next check-up: 2027-01-14 at 10:40.
Hygienist: 2027-02-03 at 08:50.""", "health"),
    "health/gp.md": note("GP - Dr Aisha Rahman, Kirkstall Health Centre", """
Phone the surgery at 8:00 for same-day appointments: 0113 496 0555.""", "health"),
    "health/allergies.md": note("Allergies", """
Allergic to penicillin (rash, 2019). Mild hay fever in June: cetirizine helps.""", "health"),
    "health/physio.md": note("Knee physio", """
With Ben at Headway Physio, Tuesdays at 17:15 until the end of January.
Exercises: step-downs and wall sits, twice a day.""", "health"),
    "home/bins.md": note("Bin days", """
Black bin on Thursdays. Green recycling every other Monday. Brown garden waste stopped for winter.""", "home"),
    "home/boiler.md": note("Boiler", """
Worcester Bosch combi, fitted 2019. Next service due 2027-03-02.
Serviced by Gareth from Warmfix (see people/gareth-lund.md).""", "home"),
    "home/car.md": note("Car - Skoda Fabia", """
Blue Skoda Fabia estate. MOT due 2027-05-18. Tyres changed in September.""", "home"),
    "home/insurance.md": note("Home insurance", """
Contents insurance renews on 2027-04-09. Shop around a month before.""", "home"),
    "recipes/lina-dal.md": note("Lina's red lentil dal", """
Red lentils, onion, garlic, ginger, turmeric and a tin of tomatoes.
Simmer 25 minutes, finish with lemon and coriander. Serves four.""", "recipe"),
    "recipes/mums-jollof.md": note("Mum's jollof rice", """
Long grain rice, tomatoes, red peppers, one scotch bonnet, onions, thyme and bay.
Cook the pepper base down for 20 minutes before the rice goes in.""", "recipe"),
    "recipes/banana-bread.md": note("Banana bread", """
Three very ripe bananas, 250 g flour, 100 g butter, 2 eggs, walnuts.
Bake at 170C for 55 minutes.""", "recipe"),
    "travel/lisbon-2027.md": note("Lisbon trip, April 2027", """
2027-04-15 to 2027-04-20 with Jo. Staying at Casa do Rio in Alfama.
Want to see the Gulbenkian garden.""", "travel"),
}

# ---------------------------------------------------------------------------------------------
# the generated notes

FIRST = """Aditi Bram Carys Dominik Elif Farid Gwen Hamza Ilse Joaquin Kezia Laszlo Maren Niall Oona
Pavel Quentin Rosa Soren Thea Umar Vesna Wilf Xenia Yusuf Zara Anouk Bastian Cleo Dario Esme Fintan
Greer Hugo Ines Jonah Katya Lorcan Mira Nico Orla Piet Rhea Silas Tova Ugo Vida Wes Yara Zeb Alba
Benedikt Celine Desmond Eira Florin Gianna Hollis Isak Juno Kalani Leif Marisol Nadim Odile Ptolemy
Rania Stellan Tamsin Uriel Viggo Yvette Zoltan Amara Beau Calla Dev Elowen Fabian Gulnara Henrik
Ida Jasper Kofi Liesel Matteo Nell Osian Paloma Ravi Saskia Teodor Una Vikram Willa Xavi Yosef Zinnia
Alvar Bryony Cosmo Delphine Emre Freya Gideon Hattie Ivo Jessamy Keir Lucia Magnus Noor Otto Perpetua
Rufus Sunniva Tarek""".split()
LAST = """Ashworth Bellamy Calloway Dimitrov Eastwood Fairbairn Gallo Hendry Iqbal Jaworski Kerr
Lindholm Mbeki Nakamura Oduya Pennington Quayle Rossi Sandoval Thorne Ueda Varga Whitlock Yadav
Zubiri Albright Brennan Castell Dunmore Ellery Ferreira Gorski Holloway Ibsen Jovanovic Kaplan
Laurent Moreno Novotny Osei Pryce Ruiz Sato Tremaine Unwin Vance Winslow Yilmaz Zander""".split()
RELATIONS = ["friend from climbing", "friend from the choir", "old schoolfriend", "colleague at the studio",
             "former colleague", "neighbour across the road", "friend from university", "client",
             "Jo's friend", "friend from the allotment society", "running club friend", "book club friend"]
CITIES = ["Leeds", "Harrogate", "Sheffield", "Manchester", "Hebden Bridge", "Otley", "Ilkley", "Wakefield",
          "Huddersfield", "Durham", "Newcastle", "Edinburgh", "Glasgow", "Liverpool", "Norwich", "Cardiff"]
JOBS = ["is a nurse", "writes software", "is an architect", "runs a bakery", "is a civil engineer",
        "works in marketing", "is a solicitor", "is a physiotherapist", "is a carpenter", "is a GP",
        "lectures in history", "manages a bookshop", "is a translator", "is a gardener", "is a data analyst",
        "is a chef", "is a paramedic", "is an electrician", "teaches primary school", "is a journalist",
        "is a graphic designer", "works for the council", "is a tree surgeon", "is an accountant"]
LIKES = ["dark chocolate", "Thai curries", "real ale", "sea swimming", "board games", "jazz records",
         "fell running", "pottery", "crosswords", "birdwatching", "cold-water swimming", "sourdough",
         "old films", "cycling in the Dales", "Turkish delight", "gin with elderflower", "chess", "knitting"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]
TOPICS = ["their new job", "a house move", "the marathon", "a trip to Norway", "their kitchen extension",
          "the school run", "a new puppy", "their wedding plans", "a bike tour", "starting a podcast",
          "the allotment waiting list", "a pottery course", "their dad's operation", "learning Welsh"]
STREETS = ["Otley Road", "North Street", "Call Lane", "Briggate", "Kirkgate", "Street Lane",
           "Harrogate Road", "Chapel Street", "Kirkstall Road", "Woodhouse Lane", "Meanwood Road",
           "Roundhay Road", "Town Street", "Station Road", "Regent Street", "Albion Place"]
PLACE_KINDS = [("cafe", "Cafe"), ("bakery", "Bakery"), ("restaurant", "Kitchen"), ("pub", "Arms"),
               ("bookshop", "Books"), ("hardware shop", "Hardware"), ("deli", "Deli"), ("bike shop", "Cycles")]
PLACE_NAMES = """Juniper Hawthorn Larder Copper Kettle Foundry Linden Salt Marrow Quarry Heron Fennel
Tannery Bramble Orchard Lantern Mill Wharf Pepper Thistle Rookery Saffron Granary Anchor Cobble
Ember Hopper Sorrel Kiln Meadow Button Barley Damson""".split()
DISHES = [("Leek and potato soup", "leeks, potatoes, stock, cream", "Simmer 30 minutes"),
          ("Shakshuka", "eggs, tomatoes, peppers, cumin", "Simmer 15 minutes"),
          ("Lemon drizzle cake", "butter, sugar, eggs, flour, lemons", "Bake at 180C for 45 minutes"),
          ("Mushroom risotto", "arborio rice, mushrooms, parmesan, white wine", "Stir 20 minutes"),
          ("Chickpea curry", "chickpeas, coconut milk, spinach, garam masala", "Simmer 25 minutes"),
          ("Focaccia", "strong flour, yeast, olive oil, rosemary, sea salt", "Bake at 220C for 20 minutes"),
          ("Parkin", "oatmeal, black treacle, golden syrup, ginger", "Bake at 150C for 90 minutes"),
          ("Fish pie", "haddock, prawns, mashed potato, leeks", "Bake at 200C for 30 minutes"),
          ("Ratatouille", "aubergine, courgette, peppers, tomatoes", "Roast at 200C for 40 minutes"),
          ("Flapjacks", "oats, butter, golden syrup, sugar", "Bake at 170C for 25 minutes"),
          ("Minestrone", "beans, pasta, carrots, celery, tomatoes", "Simmer 35 minutes"),
          ("Apple crumble", "bramley apples, flour, butter, oats", "Bake at 190C for 35 minutes"),
          ("Pad thai", "rice noodles, tofu, peanuts, tamarind", "Stir-fry 8 minutes"),
          ("Yorkshire puddings", "eggs, flour, milk, dripping", "Bake at 230C for 20 minutes"),
          ("Chilli con carne", "mince, kidney beans, tomatoes, chilli", "Simmer 60 minutes"),
          ("Scones", "self-raising flour, butter, milk, sultanas", "Bake at 210C for 12 minutes"),
          ("Green curry", "chicken, green curry paste, coconut milk, basil", "Simmer 20 minutes"),
          ("Brownies", "dark chocolate, butter, sugar, eggs", "Bake at 180C for 25 minutes"),
          ("Dhal makhani", "black lentils, kidney beans, butter, cream", "Simmer 90 minutes"),
          ("Gazpacho", "tomatoes, cucumber, pepper, garlic, sherry vinegar", "Chill 2 hours"),
          ("Carrot cake", "carrots, flour, eggs, walnuts, cream cheese", "Bake at 170C for 50 minutes"),
          ("Pea and mint soup", "frozen peas, mint, stock, shallots", "Simmer 10 minutes"),
          ("Tarte tatin", "apples, puff pastry, butter, sugar", "Bake at 200C for 25 minutes"),
          ("Bean chilli", "black beans, sweet potato, peppers, chipotle", "Simmer 40 minutes"),
          ("Pancakes", "flour, eggs, milk, butter", "Fry 2 minutes a side")]
APPLIANCES = [("washing machine", "Bosch"), ("fridge freezer", "Beko"), ("dishwasher", "Miele"),
              ("oven", "Neff"), ("tumble dryer", "Hotpoint"), ("vacuum cleaner", "Dyson"),
              ("microwave", "Panasonic"), ("kettle", "Russell Hobbs"), ("lawn mower", "Mountfield"),
              ("coffee machine", "Sage"), ("printer", "Brother"), ("electric bike", "Raleigh")]
SITES = ["Temple Newsam", "Golden Acre Park", "Hyde Park", "Bramley Fall", "Middleton Park", "Potternewton",
         "Harehills", "Woodhouse Moor", "Armley Mills", "Holbeck", "Chapeltown", "Beeston Hill"]
CLIENTS = ["Leeds Beckett University", "Harrogate Borough Council", "the Canal & River Trust", "a housing association",
           "Yorkshire Water", "a primary school", "the NHS trust", "a private client"]


def date(year: int) -> str:
    return f"{year}-{R.randint(1, 12):02d}-{R.randint(1, 28):02d}"


KEY_PHONES = {"412", "733", "155", "268", "381", "590"}    # the hand-written notes' 07700 900xxx
TAKEN_PHONES: set[str] = set()


def phone() -> str:
    """A phone number no other note has."""
    while (tail := str(R.randint(100, 999))) in TAKEN_PHONES:
        pass
    TAKEN_PHONES.add(tail)
    return f"07700 900{tail}"


def people(n: int) -> list[dict]:
    firsts = R.sample(FIRST, n)
    out = []
    for first in firsts:
        last = R.choice(LAST)
        p = {"first": first, "last": last, "full": f"{first} {last}", "slug": f"{first}-{last}".lower(),
             "relation": R.choice(RELATIONS), "city": R.choice(CITIES), "job": R.choice(JOBS),
             "birthday": f"{R.randint(1, 28)} {R.choice(MONTHS)}" if R.random() < 0.8 else None,
             "phone": phone() if R.random() < 0.7 else None, "likes": R.choice(LIKES),
             "plain": R.random() < 0.15}
        lines = [f"{first} {p['job']}."]
        if p["birthday"]:
            lines.append(f"Birthday: {p['birthday']}.")
        if p["phone"]:
            lines.append(f"Phone: {p['phone']}")
        lines.append(f"Likes {p['likes']}.")
        if p["plain"]:   # written by hand, without frontmatter
            lines.insert(0, f"{p['full']}, {p['relation']}, {p['city']}.")
            p["text"] = note(None, "\n".join(lines))
        else:
            p["text"] = note(f"{p['full']} - {p['relation']}, {p['city']}", "\n".join(lines), "person")
        out.append(p)
    return out


def places(n: int) -> list[dict]:
    out = []
    for name in R.sample(PLACE_NAMES, n):
        kind, suffix = R.choice(PLACE_KINDS)
        title = f"The {name} {suffix}"
        street = f"{R.randint(2, 180)} {R.choice(STREETS)}"
        opens = f"{R.choice([7, 8, 9, 10, 11, 12])}:{R.choice(['00', '30'])}"
        text = note(f"{title} - {kind}", f"Address: {street}, Leeds.\nOpens at {opens}; closed on {R.choice(['Mondays', 'Sundays', 'Tuesdays'])}.",
                    "place")
        out.append({"slug": f"{name.lower()}-{suffix.lower()}", "title": title, "street": street, "text": text})
    return out


def generated() -> tuple[dict[str, str], list[dict], dict]:
    notes: dict[str, str] = {}
    folk = people(112)
    for p in folk:
        notes[f"people/{p['slug']}.md"] = p["text"]
    spots = places(30)
    for s in spots:
        notes[f"places/{s['slug']}.md"] = s["text"]
    for dish, ingredients, method in DISHES:
        slug = dish.lower().replace(" ", "-")
        notes[f"recipes/{slug}.md"] = note(dish, f"{ingredients.capitalize()}.\n{method}. Serves {R.randint(2, 8)}.", "recipe")
    for thing, brand in APPLIANCES:
        notes[f"home/appliances/{thing.replace(' ', '-')}.md"] = note(
            f"{brand} {thing}", f"Bought {date(R.choice([2021, 2022, 2023, 2024]))}. Warranty until {date(2027)}.", "home")
    for i, site in enumerate(SITES):
        lead = R.choice([p for p in folk if p["relation"] == "colleague at the studio"] or folk)
        notes[f"projects/{site.lower().replace(' ', '-')}.md"] = note(
            f"{site} - {R.choice(['planting scheme', 'play area', 'path repairs', 'tree survey', 'wildflower meadow'])}",
            f"Client: {R.choice(CLIENTS)}. {lead['first']} leads.\nNext milestone {date(2027)}.", "project")
        notes[f"work/site-visit-{site.lower().replace(' ', '-')}.md"] = note(
            f"Site visit notes - {site}", f"Visited on {date(2026)} with {lead['first']}. "
            f"{R.choice(['Soil waterlogged at the north end.', 'Two trees need a climber.', 'Steps need handrails.', 'Good light all afternoon.'])}",
            "work")
    journal_folk = R.sample(folk, 70)
    for i, p in enumerate(journal_folk):
        d = date(R.choice([2025, 2026]))
        spot = R.choice(spots)
        notes[f"journal/{d}-{p['slug']}.md"] = note(
            None, f"{d}: coffee with {p['first']} at {spot['title']}. Talked about {R.choice(TOPICS)}.")
    for month, what in [("2026-10-08", "Flu jab at the pharmacy"), ("2026-06-21", "Blood pressure check, all fine"),
                        ("2026-03-15", "Eye drops for conjunctivitis, cleared in a week")]:
        notes[f"health/{month}.md"] = note(None, f"{month}: {what}.")
    return notes, folk, {"places": spots}


# ---------------------------------------------------------------------------------------------
# the questions

HAND = [
    # one-note / body-only over the key notes (and the example's)
    ("one-note", "Where does my sister live?", ["Bristol"], ["Manchester", "Bath"], ["people/lina.md"]),
    ("body-only", "When is Lina's birthday?", [["14 March", "March 14", "14th March", "March 14th", "14th of March"]], ["14 May", "May 14"], ["people/lina.md"]),
    ("body-only", "When is my cousin Nina's birthday?", [["14 May", "May 14", "14th May", "May 14th", "14th of May"]], ["14 March", "March 14"], ["people/nina-okafor.md"]),
    ("body-only", "What is Marek Nowak's phone number?", ["07700 900733"], [], ["people/marek-nowak.md"]),
    ("one-note", "Who is Marek Novak?", [["colleague", "works with"], ["planting", "plants"]], ["plumber"], ["people/marek.md"]),
    ("one-note", "What does my neighbour Marek Nowak do for a living?", ["plumber"], ["planting"], ["people/marek-nowak.md"]),
    ("one-note", "When is the Kirkstall planting plan due?", [["2026-12-12", "12 December", "December 12", "12th December"]], ["2026-12-19", "19 December"], ["projects/kirkstall-park.md"]),
    ("body-only", "When is the planting plan for the Halifax courtyard due?", [["2026-12-19", "19 December", "December 19", "19th December"]], ["2026-12-12", "12 December"], ["projects/halifax-courtyard.md"]),
    ("body-only", "When is my next dental check-up?", [["2027-01-14", "14 January", "January 14", "14th January"]], ["2027-02-03"], ["health/dentist.md"]),
    ("body-only", "When is my hygienist appointment?", [["2027-02-03", "3 February", "February 3", "3rd February"]], ["2027-01-14"], ["health/dentist.md"]),
    ("one-note", "Who is my GP?", ["Rahman"], [], ["health/gp.md"]),
    ("body-only", "Which antibiotic am I allergic to?", ["penicillin"], [], ["health/allergies.md"]),
    ("body-only", "When is the boiler service due?", [["2027-03-02", "2 March", "March 2", "2nd March"]], [], ["home/boiler.md"]),
    ("body-only", "Which day is the black bin collected?", [["Thursday", "Thursdays"]], ["Monday"], ["home/bins.md"]),
    ("body-only", "When is the car's MOT due?", [["2027-05-18", "18 May", "May 18", "18th May"]], [], ["home/car.md"]),
    ("body-only", "When does the home insurance renew?", [["2027-04-09", "9 April", "April 9", "9th April"]], [], ["home/insurance.md"]),
    ("one-note", "What is my allotment plot number?", ["17"], [], ["projects/allotment.md"]),
    ("body-only", "How much is the allotment rent and when is it due?", ["45", ["1 April", "April 1", "1st April", "first of April"]], [], ["projects/allotment.md"]),
    ("body-only", "How much did Hale & Sons quote for the kitchen?", [["8,400", "8400"]], [], ["projects/kitchen-renovation.md"]),
    ("body-only", "When does the kitchen work start?", [["2027-01-11", "11 January", "January 11", "11th January"]], [], ["projects/kitchen-renovation.md"]),
    ("body-only", "What is my home address?", ["41 Cardigan Road", ["LS6 3AG", "Flat 3"]], [], ["places/home.md"]),
    ("body-only", "What is the studio's address?", ["4 Wharf Street"], [], ["work/studio.md"]),
    ("body-only", "When is the weekly studio team meeting?", [["Tuesday", "Tuesdays"], ["10:00", "10am", "10 am", "10 o'clock"]], [], ["work/team-meeting.md"]),
    ("body-only", "What is the mileage rate for work expenses?", ["45p"], [], ["work/expenses.md"]),
    ("body-only", "At what temperature and for how long do I bake banana bread?", [["170C", "170 C", "170 degrees", "170°C"], "55 minutes"], [], ["recipes/banana-bread.md"]),
    ("body-only", "Which spice goes into Lina's red lentil dal?", ["turmeric"], [], ["recipes/lina-dal.md"]),
    ("body-only", "When am I going to Lisbon?", [["2027-04-15", "15 April", "April 15", "15th April"]], [], ["travel/lisbon-2027.md"]),
    ("body-only", "Where am I staying in Lisbon?", ["Casa do Rio"], [], ["travel/lisbon-2027.md"]),
    ("body-only", "What is Jo's dog called?", ["Biscuit"], [], ["people/jo-adebayo.md"]),
    ("one-note", "Where does Jo Adebayo live?", ["Chapel Allerton"], [], ["people/jo-adebayo.md"]),
    ("body-only", "What is my mum's home phone number?", ["01904 496 0210"], ["07700 900155"], ["people/grace-okafor.md"]),
    ("body-only", "When is my physio appointment each week?", [["Tuesday", "Tuesdays"], "17:15"], [], ["health/physio.md"]),
    ("one-note", "Who is Lina's partner?", ["Tomas"], ["Marek"], ["people/tomas-berg.md"]),
    ("one-note", "Where does Lena Okoro live?", ["Bath"], ["Bristol"], ["people/lena-okoro.md"]),
    ("one-note", "Who keeps my spare key?", ["Ruth"], [], ["people/ruth-baird.md"]),
    ("body-only", "What does Jo drink instead of coffee?", ["mint tea"], [], ["people/jo-adebayo.md"]),
    # two-note
    ("two-note", "What is the phone number of the engineer who services my boiler?", ["0113 496 0882"], [], ["home/boiler.md", "people/gareth-lund.md"]),
    ("two-note", "What is the phone number of my dentist's practice?", ["0113 496 0217"], ["0113 496 0555"], ["health/dentist.md", "places/headingley-dental.md"]),
    ("two-note", "What is the phone number of the person who leads the Roundhay Lakeside project?", ["07700 900381"], [], ["projects/roundhay-lakeside.md", "people/olu-mensah.md"]),
    ("two-note", "What does my sister's partner do for a living?", ["sound engineer"], [], ["people/lina.md", "people/tomas-berg.md"]),
    ("two-note", "Which is due first: the Kirkstall planting plan or the Halifax courtyard planting plan?", ["Kirkstall"], [], ["projects/kirkstall-park.md", "projects/halifax-courtyard.md"]),
    ("two-note", "What is the address of the cafe where I get my oat flat white?", ["4 Wharf Street"], [], ["work/studio.md", "places/grove-cafe.md"]),
    ("two-note", "Which antibiotic must I avoid, and who is my GP?", ["penicillin", "Rahman"], [], ["health/allergies.md", "health/gp.md"]),
    ("two-note", "I want to cook mum's jollof rice for her birthday: when is her birthday, and which chilli goes in?", [["2 August", "August 2", "2nd August", "2nd of August"], "scotch bonnet"], [], ["people/grace-okafor.md", "recipes/mums-jollof.md"]),
    ("two-note", "When is the Kirkstall planting plan due, and how is Marek best reached?", [["2026-12-12", "12 December", "December 12"], "phone", "afternoon"], [], ["projects/kirkstall-park.md", "people/marek.md"]),
    # unanswerable
    ("unanswerable", "What is Marek Novak's phone number?", [], ["07700 900733"], ["people/marek.md", "people/marek-nowak.md"]),
    ("unanswerable", "When is my next eye test?", [], ["2027-01-14", "2027-02-03"], ["health/dentist.md"]),
    ("unanswerable", "When is Lena Okoro's birthday?", [], ["14 March", "14 May"], ["people/lena-okoro.md"]),
    ("unanswerable", "What is the budget for the Roundhay Lakeside project?", [], [], ["projects/roundhay-lakeside.md"]),
    ("unanswerable", "What time is my flight to Lisbon?", [], [], ["travel/lisbon-2027.md"]),
    ("unanswerable", "Who is my landlord?", [], [], ["places/home.md"]),
    ("unanswerable", "What is my blood type?", [], [], ["health/allergies.md"]),
    ("unanswerable", "When is Tomas Berg's birthday?", [], ["14 March"], ["people/tomas-berg.md"]),
    ("unanswerable", "When does the boiler's warranty end?", [], ["2027-03-02"], ["home/boiler.md"]),
    ("unanswerable", "Which school does Nina's son go to?", [], [], ["people/nina-okafor.md"]),
    ("unanswerable", "What did the Kirkstall drainage survey find?", [], [], ["projects/kirkstall-park.md"]),
]


def generated_questions(folk: list[dict], spots: list[dict]) -> list[tuple]:
    """Questions over the generated notes: phones, birthdays and cities of named people, the
    address of a place, and two phone numbers the notes do not have."""
    with_phone = [p for p in folk if p["phone"]]
    with_birthday = [p for p in folk if p["birthday"]]
    without_phone = [p for p in folk if not p["phone"]]
    qs = []
    for p in with_phone[:3]:
        qs.append(("body-only", f"What is {p['full']}'s phone number?", [p["phone"]], [], [f"people/{p['slug']}.md"]))
    for p in with_birthday[3:6]:
        day, month = p["birthday"].split()
        qs.append(("body-only", f"When is {p['full']}'s birthday?", [[p["birthday"], f"{month} {day}",
                                                                      f"{day}th {month}", f"{month} {day}th"]],
                   [], [f"people/{p['slug']}.md"]))
    for p in folk[10:12]:
        qs.append(("one-note", f"Which city does {p['full']} live in?", [p["city"]], [], [f"people/{p['slug']}.md"]))
    for s in spots[:2]:
        qs.append(("body-only", f"What is the address of {s['title']}?", [s["street"]], [], [f"places/{s['slug']}.md"]))
    for p in without_phone[:2]:
        qs.append(("unanswerable", f"What is {p['full']}'s phone number?", [], [], [f"people/{p['slug']}.md"]))
    return qs


def main(dest: Path = HERE) -> None:
    """Write large/memory/ and large.json under dest (the committed ones: bench/answers/)."""
    out = dest / "large" / "memory"
    R.seed(SEED)
    TAKEN_PHONES.clear()
    TAKEN_PHONES.update(KEY_PHONES)
    notes = {p.relative_to(EXAMPLE).as_posix(): p.read_text(encoding="utf-8") for p in sorted(EXAMPLE.rglob("*.md"))}
    made, folk, extra = generated()
    for rel, text in {**KEY, **made}.items():
        if rel in notes:
            raise SystemExit(f"{rel} would replace an example note")
        notes[rel] = text
    if out.exists():
        shutil.rmtree(out)
    for rel, text in sorted(notes.items()):
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text, encoding="utf-8")
    questions = []
    for i, (kind, text, must, must_not, refs) in enumerate(HAND + generated_questions(folk, extra["places"]), 1):
        for rel in refs:
            if rel not in notes:
                raise SystemExit(f"question {text!r} names no note {rel}")
        questions.append({"id": f"lg{i:02d}", "kind": kind, "question": text, "must": must, "must_not": must_not,
                          "notes": refs})
    about = ("Questions over bench/answers/large/memory (written by bench/answers/make_large.py): the example's "
             "notes and 300 more. Kinds as in example.json.")
    (dest / "large.json").write_text(json.dumps({"workspace": "large", "notes_from": "bench/answers/large/memory",
                                                 "about": about, "questions": questions}, indent=1,
                                                ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(notes)} notes, {len(questions)} questions")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
