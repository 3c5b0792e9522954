;;; quickfill-next-edit.el --- next-edit suggestions from quickfill  -*- lexical-binding: t; -*-

;;; Commentary:

;; `quickfill-next-edit' asks the server for the next edit at point
;; (quickfill/nextEdit) and shows each predicted edit as an overlay at its
;; target: the text it replaces in `quickfill-next-edit-old', its new text
;; after it in `quickfill-next-edit-new'.  `quickfill-next-edit-accept'
;; applies them, `quickfill-next-edit-jump' moves point to the first one; any
;; change to the buffer removes them.  Shown and accepted edits are reported
;; with quickfill/didShow and quickfill/didAccept (the server's acceptance
;; counts, `quickfill-stats'); nothing leaves the machine.
;;
;;   (require 'quickfill-next-edit)
;;   (define-key eglot-mode-map (kbd "C-c q n") #'quickfill-next-edit)
;;   (define-key eglot-mode-map (kbd "C-c q a") #'quickfill-next-edit-accept)
;;   (define-key eglot-mode-map (kbd "C-c q j") #'quickfill-next-edit-jump)

;;; Code:

(require 'cl-lib)
(require 'eglot)
(require 'jsonrpc)
(require 'quickfill)

(defface quickfill-next-edit-old '((t :inherit diff-removed :strike-through t))
  "Face of the text a next edit replaces.")

(defface quickfill-next-edit-new '((t :inherit diff-added))
  "Face of the text a next edit inserts.")

(defvar-local quickfill--next-edit nil
  "The shown next edit: (:id ID :tick TICK :edits ((BEG END TEXT) ...) :length N :overlays OVS).")

(defun quickfill-next-edit-clear ()
  "Remove the shown next edit."
  (interactive)
  (when quickfill--next-edit
    (mapc #'delete-overlay (plist-get quickfill--next-edit :overlays))
    (setq quickfill--next-edit nil))
  (remove-hook 'after-change-functions #'quickfill--next-edit-changed t))

(defun quickfill--next-edit-changed (&rest _)
  (quickfill-next-edit-clear))

(defun quickfill-next-edit-show (result &optional explicit)
  "Show RESULT, a quickfill/nextEdit answer (a plist); return the number of edits shown.
EXPLICIT non-nil reports it as shown on request rather than automatically."
  (quickfill-next-edit-clear)
  (let* ((edits (append (plist-get result :edits) nil))
         (spans (mapcar (lambda (e)
                          (let ((r (plist-get e :range)))
                            (list (eglot--lsp-position-to-point (plist-get r :start))
                                  (eglot--lsp-position-to-point (plist-get r :end))
                                  (plist-get e :newText))))
                        edits))
         (length (apply #'+ (mapcar (lambda (s) (quickfill--encoded-length (nth 2 s))) spans)))
         overlays)
    (when spans
      (dolist (s spans)
        (let ((ov (make-overlay (nth 0 s) (nth 1 s) nil t nil)))
          (overlay-put ov 'quickfill-next-edit t)
          (overlay-put ov 'face 'quickfill-next-edit-old)
          (overlay-put ov 'after-string (propertize (nth 2 s) 'face 'quickfill-next-edit-new))
          (push ov overlays)))
      (setq quickfill--next-edit (list :id (plist-get result :id) :tick (buffer-chars-modified-tick)
                                       :edits spans :length length :overlays overlays))
      (add-hook 'after-change-functions #'quickfill--next-edit-changed nil t)
      (quickfill--notify :quickfill/didShow
                         (list :id (plist-get result :id) :source "nextEdit"
                               :trigger (if explicit "explicit" "automatic") :length length)))
    (length spans)))

(defun quickfill-next-edit-request ()
  "The server's quickfill/nextEdit answer at point (a plist: :id :version :format :edits)."
  (jsonrpc-request (quickfill--current-server) :quickfill/nextEdit
                   (list :textDocument (eglot--VersionedTextDocumentIdentifier)
                         :position (eglot--pos-to-lsp-position))))

(defun quickfill-next-edit ()
  "Ask for the next edit at point and show it."
  (interactive)
  (let* ((result (quickfill-next-edit-request))
         (n (quickfill-next-edit-show result t)))
    (when (called-interactively-p 'interactive)
      (message (if (> n 0) "quickfill: %d edit(s); accept with `quickfill-next-edit-accept'"
                 "quickfill: no edit (%s)")
               (if (> n 0) n (or (plist-get result :reason) "none"))))
    result))

(defun quickfill-next-edit-accept ()
  "Apply the shown next edit; non-nil when something was applied."
  (interactive)
  (let ((s quickfill--next-edit))
    (when (and s (= (plist-get s :tick) (buffer-chars-modified-tick)))
      (quickfill-next-edit-clear)
      ;; Markers keep the later spans right while earlier ones change.
      (let ((spans (mapcar (lambda (e) (list (copy-marker (nth 0 e)) (copy-marker (nth 1 e) t) (nth 2 e)))
                           (plist-get s :edits))))
        (dolist (e (reverse spans))
          (save-excursion
            (goto-char (nth 0 e))
            (delete-region (nth 0 e) (nth 1 e))
            (insert (nth 2 e)))))
      (quickfill--notify :quickfill/didAccept (list :id (plist-get s :id) :acceptedLength (plist-get s :length)))
      t)))

(defun quickfill-next-edit-jump ()
  "Move point to the first shown next edit."
  (interactive)
  (let ((s quickfill--next-edit))
    (when s
      (goto-char (nth 0 (car (plist-get s :edits))))
      t)))

(provide 'quickfill-next-edit)
;;; quickfill-next-edit.el ends here
