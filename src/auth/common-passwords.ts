/**
 * The most common passwords of 8 characters and more (from public breach corpora such as
 * the SecLists top lists and NCSC's 100k list), compared case-insensitively. Passwords
 * shorter than 8 are refused by length already. ASVS 5 V6.2.4: refuse a password an attacker
 * tries first, whoever sets it (tenants and developers).
 */
const COMMON = new Set<string>([
  "00000000", "01234567", "012345678", "0123456789", "11111111", "11223344", "112233445", "12121212",
  "123123123", "12344321", "12345678", "123456789", "1234567890", "12345678910", "123456789a", "123456abc",
  "1234qwer", "123654789", "13579246", "147258369", "159753456", "1q2w3e4r", "1q2w3e4r5t", "1q2w3e4r5t6y",
  "1qaz2wsx", "1qazxsw2", "456789123", "66666666", "741852963", "789456123", "87654321", "88888888",
  "987654321", "9876543210", "a1b2c3d4", "aa123456", "aa12345678", "aaaaaaaa", "abc12345", "abc123456",
  "abcd1234", "abcdefg1", "abcdefgh", "admin123", "admin1234", "adminadmin", "administrator", "angel123",
  "angels12", "arsenal1", "asdf1234", "asdfasdf", "asdfghjk", "asdfghjkl", "autumn2024", "babygirl1",
  "baseball", "baseball1", "basketball", "batman123", "blessed1", "blink182", "buster123", "butterfly",
  "butterfly1", "changeme", "changeme1", "charlie1", "chelsea1", "chocolate", "computer", "computer1",
  "contrasena", "contraseña", "cookie123", "corvette", "december", "default1", "dragon123", "eminem123",
  "faith123", "ferrari1", "football", "football1", "football123", "fortnite", "freedom1", "garfield",
  "ginger123", "godisgood", "guest123", "hello123", "hello1234", "hellokitty", "helloworld", "hockey123",
  "iloveu123", "iloveyou", "iloveyou1", "iloveyou2", "internet", "internet1", "ironman1", "january1",
  "jennifer", "jessica1", "jesus123", "jesuschrist", "jordan23", "letmein!", "letmein1", "letmein123",
  "liverpool", "lovelove", "lovely123", "loveyou1", "master123", "matrix123", "maverick", "mercedes",
  "metallica", "michael1", "michelle", "minecraft", "minecraft1", "monday123", "monkey123", "motdepasse",
  "mustang1", "mypassword", "naruto123", "nintendo", "nirvana1", "p@ssw0rd", "p@ssword", "pa55word",
  "pass1234", "pass12345", "passpass", "passw0rd", "password", "password!", "password01", "password1",
  "password12", "password123", "password1234", "passwort", "pepper123", "pikachu1", "pokemon1", "princess",
  "princess1", "purple123", "q1w2e3r4", "q1w2e3r4t5", "qazwsxedc", "qqqqqqqq", "qwer1234", "qwerty12",
  "qwerty123", "qwerty1234", "qwertyu1", "qwertyui", "qwertyuiop", "qwertyuiop1", "root1234", "samsung1",
  "samsung123", "secret123", "senha123", "shadow123", "slipknot", "snoopy123", "soccer123", "spiderman",
  "spring2024", "starwars", "starwars1", "summer2020", "summer2021", "summer2022", "summer2023", "summer2024",
  "summer2025", "sunshine", "sunshine1", "superman", "superman1", "superstar", "sweetheart", "sweety123",
  "tennis123", "test1234", "test12345", "testtest", "thepassword", "tigger123", "toor1234", "trustno1",
  "wachtwoord", "welcome!", "welcome1", "welcome123", "whatever", "whatever1", "winter2024", "yourpassword",
  "zaq12wsx", "zxcvbnm,", "zxcvbnm1", "zxcvbnm123", "zzzzzzzz",
]);

/** True unless the password is on the bundled list of common passwords. */
export function isUncommonPassword(password: string): boolean {
  return !COMMON.has(password.trim().toLowerCase());
}

export const COMMON_PASSWORD_MESSAGE =
  "password is one of the most common passwords, the first an attacker tries: choose another (a few unrelated words make a strong one)";

/** How many passwords the list holds (documented in docs/security.md). */
export const COMMON_PASSWORD_COUNT = COMMON.size;
