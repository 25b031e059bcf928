-- PleaSQLarify Studio built-in Filmmaking database (SQLite dialect).
-- Illustrative data: titles and people are real, but durations, scores, deadlines, review texts
-- and festival programmes are invented or adjusted so that each study question's readings
-- produce different outputs.
CREATE TABLE films (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    genre TEXT,
    duration INTEGER,
    release_year INTEGER,
    budget_musd REAL
);
CREATE TABLE people (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    birth_year INTEGER,
    country TEXT
);
CREATE TABLE directors (
    film_id INTEGER REFERENCES films(id),
    person_id INTEGER REFERENCES people(id),
    PRIMARY KEY (film_id, person_id)
);
CREATE TABLE casting (
    film_id INTEGER REFERENCES films(id),
    person_id INTEGER REFERENCES people(id),
    role TEXT,
    PRIMARY KEY (film_id, person_id)
);
CREATE TABLE reviews (
    id INTEGER PRIMARY KEY,
    film_id INTEGER REFERENCES films(id),
    reviewer TEXT,
    review_text TEXT,
    score INTEGER,
    review_date DATE
);
CREATE TABLE ratings (
    film_id INTEGER PRIMARY KEY REFERENCES films(id),
    imdb_rating REAL,
    critics_rating INTEGER,
    audience_rating INTEGER
);
CREATE TABLE festivals (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    city TEXT,
    founded INTEGER
);
CREATE TABLE categories (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL
);
CREATE TABLE festival_category (
    festival_id INTEGER REFERENCES festivals(id),
    category_id INTEGER REFERENCES categories(id),
    PRIMARY KEY (festival_id, category_id)
);
CREATE TABLE scripts (
    id INTEGER PRIMARY KEY,
    film_id INTEGER REFERENCES films(id),
    title TEXT,
    writer_id INTEGER REFERENCES people(id),
    deadline DATE
);
CREATE TABLE editors (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    film_id INTEGER REFERENCES films(id),
    deadline DATE
);

INSERT INTO films (id, title, genre, duration, release_year, budget_musd) VALUES
(1, 'Pulp Fiction', 'Crime', 154, 1994, 8.5),
(2, 'Jackie Brown', 'Crime', 154, 1997, 12.0),
(3, 'Kill Bill: Vol. 2', 'Action', 137, 2004, 30.0),
(4, 'Django Unchained', 'Western', 165, 2012, 100.0),
(5, 'Titanic', 'Romance', 195, 1997, 200.0),
(6, 'Inception', 'Sci-Fi', 148, 2010, 160.0),
(7, 'The Departed', 'Crime', 151, 2006, 90.0),
(8, 'Catch Me If You Can', 'Drama', 141, 2002, 52.0),
(9, 'The Revenant', 'Drama', 156, 2015, 135.0),
(10, 'Mad Max: Fury Road', 'Action', 120, 2015, 150.0),
(11, 'Speed', 'Action', 116, 1994, 30.0),
(12, 'Die Hard', 'Action', 132, 1988, 28.0),
(13, 'Crazy, Stupid, Love.', 'Romantic Comedy', 120, 2011, 50.0),
(14, 'Notting Hill', 'Romantic Comedy', 124, 1999, 42.0),
(15, 'When Harry Met Sally...', 'Romantic Comedy', 96, 1989, 16.0),
(16, 'The Notebook', 'Romance', 120, 2004, 29.0);

INSERT INTO people (id, name, birth_year, country) VALUES
(1, 'Quentin Tarantino', 1963, 'USA'),
(2, 'Samuel L. Jackson', 1948, 'USA'),
(3, 'Uma Thurman', 1970, 'USA'),
(4, 'John Travolta', 1954, 'USA'),
(5, 'Pam Grier', 1949, 'USA'),
(6, 'Jamie Foxx', 1967, 'USA'),
(7, 'Leonardo DiCaprio', 1974, 'USA'),
(8, 'Kate Winslet', 1975, 'UK'),
(9, 'James Cameron', 1954, 'Canada'),
(10, 'Christopher Nolan', 1970, 'UK'),
(11, 'Martin Scorsese', 1942, 'USA'),
(12, 'Steven Spielberg', 1946, 'USA'),
(13, 'Alejandro G. Inarritu', 1963, 'Mexico'),
(14, 'Matt Damon', 1970, 'USA'),
(15, 'Tom Hanks', 1956, 'USA'),
(16, 'Roger Avary', 1965, 'Canada'),
(17, 'William Monahan', 1960, 'USA'),
(18, 'George Miller', 1945, 'Australia'),
(19, 'Tom Hardy', 1977, 'UK'),
(20, 'Charlize Theron', 1975, 'South Africa'),
(21, 'Keanu Reeves', 1964, 'Canada'),
(22, 'Bruce Willis', 1955, 'USA'),
(23, 'Julia Roberts', 1967, 'USA'),
(24, 'Hugh Grant', 1960, 'UK'),
(25, 'Ryan Gosling', 1980, 'Canada'),
(26, 'Emma Stone', 1988, 'USA'),
(27, 'Meg Ryan', 1961, 'USA'),
(28, 'Billy Crystal', 1948, 'USA'),
(29, 'Rachel McAdams', 1978, 'Canada'),
(30, 'Jan de Bont', 1943, 'Netherlands'),
(31, 'John McTiernan', 1951, 'USA'),
(32, 'Glenn Ficarra', 1969, 'USA'),
(33, 'John Requa', 1967, 'USA'),
(34, 'Roger Michell', 1956, 'UK'),
(35, 'Rob Reiner', 1947, 'USA'),
(36, 'Nick Cassavetes', 1959, 'USA'),
(37, 'Jeff Nathanson', 1965, 'USA'),
(38, 'Jeremy Leven', 1941, 'USA'),
(39, 'Mark L. Smith', 1968, 'USA'),
(40, 'Richard Curtis', 1956, 'UK'),
(41, 'Dan Fogelman', 1976, 'USA');

INSERT INTO directors (film_id, person_id) VALUES
(1, 1), (2, 1), (3, 1), (4, 1), (5, 9), (6, 10), (7, 11), (8, 12), (9, 13), (10, 18),
(11, 30), (12, 31), (13, 32), (13, 33), (14, 34), (15, 35), (16, 36);

INSERT INTO casting (film_id, person_id, role) VALUES
(1, 4, 'Vincent Vega'),
(1, 2, 'Jules Winnfield'),
(1, 3, 'Mia Wallace'),
(1, 22, 'Butch Coolidge'),
(1, 1, 'Jimmie Dimmick'),
(2, 5, 'Jackie Brown'),
(2, 2, 'Ordell Robbie'),
(3, 3, 'The Bride'),
(3, 2, 'Rufus'),
(4, 6, 'Django'),
(4, 7, 'Calvin Candie'),
(4, 2, 'Stephen'),
(5, 7, 'Jack Dawson'),
(5, 8, 'Rose DeWitt Bukater'),
(6, 7, 'Dom Cobb'),
(6, 19, 'Eames'),
(7, 7, 'Billy Costigan'),
(7, 14, 'Colin Sullivan'),
(8, 7, 'Frank Abagnale Jr.'),
(8, 15, 'Carl Hanratty'),
(9, 7, 'Hugh Glass'),
(9, 19, 'John Fitzgerald'),
(10, 19, 'Max Rockatansky'),
(10, 20, 'Imperator Furiosa'),
(11, 21, 'Jack Traven'),
(12, 22, 'John McClane'),
(13, 25, 'Jacob Palmer'),
(13, 26, 'Hannah Weaver'),
(14, 23, 'Anna Scott'),
(14, 24, 'William Thacker'),
(15, 28, 'Harry Burns'),
(15, 27, 'Sally Albright'),
(16, 25, 'Noah Calhoun'),
(16, 29, 'Allie Hamilton');

INSERT INTO reviews (id, film_id, reviewer, review_text, score, review_date) VALUES
(1, 1, 'Roger Ebert', 'A brash, funny crime film that keeps rewriting its own rules; the dialogue alone is worth the ticket.', 10, '1994-10-14'),
(2, 1, 'Janet Maslin', 'Talky and violent, but the fractured structure pays off in a finale that ties every thread.', 8, '1994-09-23'),
(3, 2, 'Roger Ebert', 'Slower and warmer than expected, carried by a superb lead performance.', 9, '1997-12-25'),
(4, 4, 'A. O. Scott', 'Gleefully excessive revenge story that is hard to look away from.', 7, '2012-12-24'),
(5, 5, 'Roger Ebert', 'Old-fashioned spectacle with a romance that earns its three hours.', 9, '1997-12-19'),
(6, 6, 'Peter Travers', 'A puzzle box of dreams within dreams that trusts its audience.', 9, '2010-07-15'),
(7, 7, 'Manohla Dargis', 'A tense game of cat and mouse with two moles and no safe side.', 8, '2006-10-06'),
(8, 9, 'Peter Travers', 'Punishing survival epic shot in natural light.', 8, '2015-12-24'),
(9, 10, 'Manohla Dargis', 'Two hours of pure motion that never runs out of fuel.', 10, '2015-05-14'),
(10, 15, 'Janet Maslin', 'Sharp, talky romance about whether friends can be more.', 8, '1989-07-12');

INSERT INTO ratings (film_id, imdb_rating, critics_rating, audience_rating) VALUES
(1, 8.9, 92, 96),
(2, 7.5, 88, 85),
(3, 8.0, 84, 89),
(4, 8.5, 87, 92),
(5, 7.9, 88, 69),
(6, 8.8, 87, 91),
(7, 8.5, 91, 94),
(8, 8.1, 96, 90),
(9, 8.0, 78, 84),
(10, 8.1, 97, 86),
(11, 7.3, 95, 77),
(12, 8.2, 94, 94),
(13, 7.4, 79, 84),
(14, 7.2, 84, 79),
(15, 7.7, 91, 89),
(16, 7.8, 54, 85);

INSERT INTO festivals (id, name, city, founded) VALUES
(1, 'Cannes Film Festival', 'Cannes', 1946),
(2, 'Berlinale', 'Berlin', 1951),
(3, 'Venice Film Festival', 'Venice', 1932),
(4, 'Sundance Film Festival', 'Park City', 1978),
(5, 'Toronto International Film Festival', 'Toronto', 1976);

INSERT INTO categories (id, name) VALUES
(1, 'Feature Film'),
(2, 'Documentary'),
(3, 'Short Film'),
(4, 'Animation'),
(5, 'Debut Feature'),
(6, 'Virtual Reality'),
(7, 'Music Video');

INSERT INTO festival_category (festival_id, category_id) VALUES
(1, 1), (1, 2), (1, 3), (1, 5),
(2, 1), (2, 2), (2, 3), (2, 4),
(3, 1), (3, 2), (3, 6),
(4, 1), (4, 2), (4, 3), (4, 5),
(5, 1), (5, 2), (5, 4), (5, 5);

INSERT INTO scripts (id, film_id, title, writer_id, deadline) VALUES
(1, 1, 'Pulp Fiction', 1, '1993-01-15'),
(2, 1, 'Black Mask', 16, '1992-11-30'),
(3, 2, 'Rum Punch', 1, '1996-05-01'),
(4, 3, 'Kill Bill: Vol. 2', 1, '2003-04-21'),
(5, 7, 'The Departed', 17, '2003-04-21'),
(6, 8, 'Catch Me If You Can', 37, '2001-02-10'),
(7, 16, 'The Notebook', 38, '2003-04-21'),
(8, 9, 'The Revenant', 39, '2014-06-30'),
(9, 14, 'Notting Hill', 40, '1998-03-12'),
(10, 13, 'Crazy, Stupid, Love.', 41, '2010-04-21'),
(11, 6, 'Inception', 10, '2009-03-01');

INSERT INTO editors (id, name, film_id, deadline) VALUES
(1, 'Sally Menke', 1, '1994-03-01'),
(2, 'Sally Menke', 3, '2003-04-21'),
(3, 'Thelma Schoonmaker', 7, '2006-07-15'),
(4, 'Michael Kahn', 8, '2002-09-30'),
(5, 'Lee Smith', 6, '2010-04-21'),
(6, 'Margaret Sixel', 10, '2003-04-21'),
(7, 'Conrad Buff', 5, '1997-10-01'),
(8, 'Stephen Mirrione', 9, '2015-10-31'),
(9, 'Alan Heim', 16, '2003-04-21');
