package io.sparkjournal.journal;

/**
 * The order of names in this format: by Unicode code point (JSON.md, "Writer
 * requirements"; COMMIT_LOG.md, "Checkpoints": lists sorted in code point
 * order). Java's {@code String.compareTo} orders UTF-16 units, which differs
 * above U+FFFF.
 */
public final class CodePoints {

    private CodePoints() {
    }

    /** Negative, zero or positive as {@code a} sorts before, with or after {@code b}. */
    public static int compare(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    }
}
